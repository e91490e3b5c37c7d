export * from './audit-entry';
