export * from './signing';
export * from './secrets';
export * from './retry-schedule';
export * from './disablement';
export * from './delivery-url';
export * from './forbidden-addresses';
export * from './events';
