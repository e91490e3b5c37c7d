/**
 * Transparency-log building blocks, plain TypeScript with no framework: RFC 6962 / RFC 9162 Merkle
 * trees and proofs, and the C2SP signed-note, tlog-checkpoint and tlog-witness formats.
 */
export * from './merkle';
export * from './note';
