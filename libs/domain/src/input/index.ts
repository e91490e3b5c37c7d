export * from './storable-input';
