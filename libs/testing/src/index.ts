export * from './test-database';
export * from './schema-drift';
