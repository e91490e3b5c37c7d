export * from './notice';
export * from './granted-purposes';
export * from './collection-method';
export * from './freeze';
export * from './project';
export * from './status';
