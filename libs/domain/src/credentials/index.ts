export * from './tokens';
export * from './scopes';
