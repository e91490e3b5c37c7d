export * from './residency.contracts';
