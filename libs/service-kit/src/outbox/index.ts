export * from './outbox-event.entity';
export * from './outbox';
