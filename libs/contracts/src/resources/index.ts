export * from './resources.contracts';
