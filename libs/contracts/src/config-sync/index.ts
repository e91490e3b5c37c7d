export * from './config-sync.contracts';
