export * from './form-connections.contracts';
