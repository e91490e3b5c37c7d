export * from './receipts.service';
