export * from './webhooks.contracts';
