export * from './events.contracts';
