export * from './receipts.contracts';
