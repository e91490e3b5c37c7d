export * from './errors';
export * from './identifiers';
export * from './credentials';
export * from './origins';
export * from './rate-limit';
export * from './residency';
export * from './paging';
