export * from './origins';
