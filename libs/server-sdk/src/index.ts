export * from './webhooks';
