export * from './connection';
export * from './signature';
export * from './form-definition';
export * from './mapping';
export * from './submission';
