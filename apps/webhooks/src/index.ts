export * from './webhooks.service';
