export * from './residency';
export * from './subject-match';
