export * from './storable-input';
export * from './prototype-keys';
