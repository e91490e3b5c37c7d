export * from './outbox-event.entity';
export * from './outbox';
export * from './outbox-migrations';
