export * from './template-id';
export * from './preview-token';
