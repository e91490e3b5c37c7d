export * from './state-machine';
export * from './outcomes';
export * from './deadlines';
export * from './approvals';
export * from './session-token';
export * from './purpose-decisions';
export * from './record-id';
export * from './inbox-token';
