// Development secrets kept under .data/ so that keyed references stay stable across restarts.
const fs = require('node:fs');
const path = require('node:path');
const { randomBytes } = require('node:crypto');

// DCR_DATA_DIR moves it elsewhere (tests run the launchers against a temporary folder).
const DATA_DIR = path.resolve(process.env.DCR_DATA_DIR ?? path.join(__dirname, '../../.data'));

function loadOrCreateSecrets() {
  fs.mkdirSync(DATA_DIR, { recursive: true });
  const file = path.join(DATA_DIR, 'dev-secrets.json');
  if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8'));
  const secrets = { subject_ref_key: randomBytes(32).toString('hex') };
  fs.writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}

/** A fresh operator token for this run: it only seeds, and is never written down. */
function newAdminToken() {
  return randomBytes(32).toString('base64url');
}

module.exports = { DATA_DIR, loadOrCreateSecrets, newAdminToken };
