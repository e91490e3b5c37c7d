export * from './service-config';
