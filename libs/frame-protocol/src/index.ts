export * from './types';
export * from './envelope';
export * from './schemas';
export * from './validate';
