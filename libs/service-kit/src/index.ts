export * from './logger';
export * from './service-definition';
export * from './service-clients';
export * from './service-core.module';
export * from './health.controller';
export * from './start-service';
export * from './idle-memory';
export * from './outbox';
