export * from './verify-export';
export { main } from './cli';
