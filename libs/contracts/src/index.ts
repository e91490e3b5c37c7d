export * from './residency';
export * from './subjects';
export * from './config-sync';
/** `<service>.health`: every service answers it when it and its database are up. */
export const healthPattern = (service: string) => `${service}.health`;
export * from './flows';
export * from './decisions';
export * from './inbox';
export * from './events';
export * from './audit';
export * from './webhooks';
export * from './receipts';
export * from './records';
export * from './form-connections';
export * from './templates';
export * from './resources';
export * from './snapshot-parts';
