export * from './templates.contracts';
