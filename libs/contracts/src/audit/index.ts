export * from './audit.contracts';
