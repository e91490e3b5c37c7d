export * from './test-database';
export * from './schema-drift';
export * from './webhook-receiver';
export * from './lost-connection';
export * from './refused-connection';
