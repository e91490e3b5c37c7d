export * from './token-bucket';
export * from './headers';
