export * from './receipt-schema';
export * from './receipt-types';
export * from './validate-receipt';
