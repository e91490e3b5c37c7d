export * from './configuration-merge';
