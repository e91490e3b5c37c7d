#!/usr/bin/env node
// Prints a new pair of C2SP signer keys for a country's audit-chain service: the log's checkpoint key
// (AUDIT_CHECKPOINT_KEY) and the witness's cosigning key (AUDIT_WITNESS_KEY), with their public
// verifier keys. Run after `npm run build`:  node tools/audit/generate-keys.js us.decisions.example.com/audit/us
const { generateCosignerKey, generateNoteKey } = require('../../libs/transparency/dist');

const origin = process.argv[2];
if (!origin || /[\s+]/.test(origin)) {
  console.error('usage: node tools/audit/generate-keys.js <log origin, e.g. us.decisions.example.com/audit/us>');
  process.exit(2);
}
const witnessName = origin.replace(/\/audit\//, '/witness/');
const checkpoint = generateNoteKey(origin);
const witness = generateCosignerKey(witnessName === origin ? `${origin}/witness` : witnessName);
console.log(`AUDIT_CHECKPOINT_KEY=${checkpoint.signerKey}`);
console.log(`AUDIT_WITNESS_KEY=${witness.signerKey}`);
console.log(`# public: checkpoint verifier key ${checkpoint.verifierKey}`);
console.log(`# public: witness verifier key    ${witness.verifierKey}`);
