export * from './database-url';
export * from './ensure-database';
export * from './service-data-source';
export * from './migrate';
export * from './raw-rows';
export * from './query-logger';
export * from './prepared-statement';
export * from './call-batcher';
