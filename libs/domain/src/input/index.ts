export * from './storable-input';
export * from './prototype-keys';
export * from './display-text';
