export * from './identifiers';
export { randomString, ID_ALPHABET } from './random';
