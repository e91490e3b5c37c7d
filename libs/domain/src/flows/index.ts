export * from './canonical-json';
export * from './iso-duration';
export * from './flow-terms';
export * from './capture';
export * from './fingerprint';
export * from './participant-flow';
export * from './version-in-force';
