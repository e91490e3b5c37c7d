export * from './inbox.contracts';
