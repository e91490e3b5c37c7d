export * from './identifiers';
export { prefixedRandomString, randomString, ID_ALPHABET } from './random';
