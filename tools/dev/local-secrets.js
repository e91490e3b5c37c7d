// Development secrets kept under .data/ so that keyed references stay stable across restarts.
const fs = require('node:fs');
const path = require('node:path');
const { generateKeyPairSync, randomBytes } = require('node:crypto');

// DCR_DATA_DIR moves it elsewhere (tests run the launchers against a temporary folder).
const DATA_DIR = path.resolve(process.env.DCR_DATA_DIR ?? path.join(__dirname, '../../.data'));

/** A private ES256 JWK for signing one country's receipts. */
function newReceiptSigningKey() {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { ...privateKey.export({ format: 'jwk' }), alg: 'ES256', use: 'sig' };
}

/**
 * The development secrets: the subject reference key, and each country's receipt signing key (kept,
 * so receipts signed in one run still verify with the keys published in the next). Older files get
 * what they lack added.
 */
function loadOrCreateSecrets(countries = ['US', 'DE']) {
  fs.mkdirSync(DATA_DIR, { recursive: true });
  const file = path.join(DATA_DIR, 'dev-secrets.json');
  const secrets = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : { subject_ref_key: randomBytes(32).toString('hex') };
  const before = JSON.stringify(secrets);
  secrets.receipt_signing_keys ??= {};
  for (const country of countries) secrets.receipt_signing_keys[country] ??= newReceiptSigningKey();
  if (JSON.stringify(secrets) !== before) fs.writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}

/** A fresh operator token for this run: it only seeds, and is never written down. */
function newAdminToken() {
  return randomBytes(32).toString('base64url');
}

module.exports = { DATA_DIR, loadOrCreateSecrets, newAdminToken };
