export * from './flows.contracts';
