export * from './records.contracts';
