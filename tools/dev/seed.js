// Seeds the development application through the public API, exactly as an operator would, and
// writes .data/dev-credentials.json (contract: "Applications and credentials").
const fs = require('node:fs');
const path = require('node:path');
const { DATA_DIR } = require('./local-secrets');

const CREDENTIALS_FILE = path.join(DATA_DIR, 'dev-credentials.json');
const SEED_ORIGINS = ['http://localhost', 'http://127.0.0.1'];

async function call(baseUrl, method, route, token, body) {
  const response = await fetch(`${baseUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  const json = text ? JSON.parse(text) : undefined;
  if (!response.ok) throw new Error(`${method} ${route} answered ${response.status}: ${text}`);
  return json;
}

async function statusOf(baseUrl, route, token) {
  const response = await fetch(`${baseUrl}${route}`, { headers: { authorization: `Bearer ${token}` } });
  await response.arrayBuffer();
  return response.status;
}

async function waitFor(description, check, timeoutMs = 20000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${description}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Reuses the credentials of an earlier run when they still work, otherwise creates the sandbox
 * application with an API token, a publishable key and the two local origins. Waits until every
 * country accepts the token (configuration replicates from the authoring country).
 */
async function seedDevelopment({ endpoints, adminToken, authoringCountry = 'US' }) {
  const authoring = endpoints[authoringCountry];
  let credentials;
  if (fs.existsSync(CREDENTIALS_FILE)) {
    const previous = JSON.parse(fs.readFileSync(CREDENTIALS_FILE, 'utf8'));
    if (previous.api_token && (await statusOf(authoring, '/api/v1/me', previous.api_token)) === 200) credentials = previous;
  }
  if (!credentials) {
    const application = await call(authoring, 'POST', '/api/v1/applications', adminToken, {
      name: 'Development application',
      environment: 'sandbox',
    });
    const token = await call(authoring, 'POST', `/api/v1/applications/${application.id}/api_tokens`, adminToken, {
      name: 'development',
    });
    const key = await call(authoring, 'POST', `/api/v1/applications/${application.id}/publishable_keys`, adminToken);
    for (const origin of SEED_ORIGINS) {
      await call(authoring, 'POST', `/api/v1/applications/${application.id}/allowed_origins`, adminToken, {
        allowed_origin: { origin },
      });
    }
    credentials = { application_id: application.id, api_token: token.token, publishable_key: key.key };
  }
  credentials = { ...credentials, endpoints };
  for (const [country, url] of Object.entries(endpoints)) {
    await waitFor(`${country} to accept the development token`, async () => (await statusOf(url, '/api/v1/me', credentials.api_token)) === 200);
  }
  fs.mkdirSync(DATA_DIR, { recursive: true });
  fs.writeFileSync(CREDENTIALS_FILE, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  return { credentials, file: CREDENTIALS_FILE };
}

/**
 * A path as it is printed for copying: relative to the working directory when it lies inside it (the
 * default `.data/`), else absolute, as DCR_DATA_DIR names it (`../../tmp/x-data/…` is no path to copy).
 */
function shownPath(file, cwd = process.cwd()) {
  const relative = path.relative(cwd, file);
  return relative === '' || relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative) ? path.resolve(file) : relative;
}

function printEndpoints({ endpoints, file, mode }) {
  const lines = [
    '',
    `Decision, Consent and Receipt Service (${mode}) is ready:`,
    ...Object.entries(endpoints).map(([country, url]) => `  ${country}  ${url}   (${url}/.well-known/openapi)`),
    `  credentials: ${shownPath(file)}`,
    '  stop with Ctrl-C',
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

module.exports = { seedDevelopment, printEndpoints, shownPath, waitFor, CREDENTIALS_FILE };
