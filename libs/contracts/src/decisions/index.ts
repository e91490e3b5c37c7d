export * from './decisions.contracts';
