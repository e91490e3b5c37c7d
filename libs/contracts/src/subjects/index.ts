export * from './subjects.contracts';
