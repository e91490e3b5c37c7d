export * from './fixtures';
export * from './arbitraries';
export * from './schema-assertions';
