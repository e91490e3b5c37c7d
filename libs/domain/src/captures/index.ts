export * from './attestation';
export * from './supersession';
export * from './idempotency';
export * from './status';
export * from './hosted-decisions';
export * from './field-rendering';
export * from './records-page';
export * from './captured-at';
