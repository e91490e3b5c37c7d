export * from './tokens';
export * from './scopes';
export * from './bearer-seal';
