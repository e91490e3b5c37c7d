import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { Client } from 'pg';
import { main as verifyCli, verifyAuditExport } from '@dcr/audit-verifier';
import { auditPayloadDigest, checkAuditChain } from '@dcr/domain';
import {
  formatAddCheckpointRequest,
  formatCheckpoint,
  generateNoteKey,
  leafHash,
  noteSignerFromKey,
  openNote,
  parseCheckpoint,
  parseCosignatureResponse,
  parseNote,
  parseVerifierKey,
  signNote,
  verifyConsistency,
  verifyCosignature,
  verifyInclusion,
} from '@dcr/transparency';
import { AUDIT_APPEND } from '@dcr/contracts';
import { InProcessBus } from '@dcr/transport';
import { lastValueFrom } from 'rxjs';
import { applicationWithToken, countryClient, eventually, http, randomSecret, RunningCountry, startCountry } from '../support/country-harness';
import { TestTlogWitness } from '../support/tlog-witness';

const ORIGIN = 'audit.test.invalid/us';
const hex = (value: string) => Buffer.from(value, 'hex');

/**
 * The audit trail end to end on two countries: decisions reach the application's hash chain exactly
 * once, anchors are signed and cosigned by the peer country's witness and by an external tlog-witness,
 * proofs verify, the witness refuses rollbacks and forks, and the offline verifier names tampering.
 */
describe('audit trail, anchors and witnesses', () => {
  let us: RunningCountry;
  let de: RunningCountry;
  let witness: TestTlogWitness;
  const adminToken = randomSecret();
  const logKey = generateNoteKey(ORIGIN);
  let applicationId: string;
  let apiToken: string;
  let flowId: string;
  let db: Client;

  const api = (method: string, path: string, body?: unknown, token = apiToken) => http(us.url, method, path, { token, body });
  const entriesOf = async (app = applicationId, token = apiToken) => (await api('GET', `/api/v1/applications/${app}/audit/export`, undefined, token)).body;

  async function completedDecision(): Promise<string> {
    const created = await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId });
    expect(created.status).toBe(201);
    const token = created.body.session_token;
    for (const to of ['informed', 'evidenced']) {
      expect((await http(us.url, 'POST', `/api/v1/decisions/${token}/transitions`, { body: { to } })).status).toBe(200);
    }
    expect((await http(us.url, 'POST', `/api/v1/decisions/${token}/complete`, { body: { outcome: 'granted' } })).status).toBe(200);
    return token;
  }

  async function trailSize(): Promise<number> {
    const { rows } = await db.query('SELECT count(*)::int AS n FROM audit_chain.entries');
    return rows[0].n;
  }

  /** Every event relayed: the outboxes delete what the trail has committed. */
  async function settled(): Promise<void> {
    await eventually(async () => (await db.query('SELECT 1 FROM decisions.outbox UNION ALL SELECT 1 FROM gateway.outbox')).rowCount === 0);
  }

  beforeAll(async () => {
    witness = new TestTlogWitness('witness.test.invalid/external', () => parseVerifierKey(noteSignerFromKey(logKey.signerKey).verifierKey));
    await witness.start();
    const bus = new InProcessBus();
    const common = { transport: 'inprocess' as const, bus, subjectRefKey: randomSecret(), adminToken };
    de = await startCountry({ ...common, country: 'DE', peers: ['US'], env: { ANCHOR_INTERVAL: '1h' } });
    us = await startCountry({
      ...common,
      country: 'US',
      peers: ['DE'],
      env: {
        ANCHOR_INTERVAL: '1h',
        AUDIT_LOG_ORIGIN: ORIGIN,
        AUDIT_CHECKPOINT_KEY: logKey.signerKey,
        AUDIT_EXTERNAL_WITNESSES: `${witness.url} ${witness.cosigner.verifierKey}`,
      },
    });
    db = new Client({ connectionString: us.database.url });
    await db.connect();
    ({ applicationId, apiToken } = await applicationWithToken(us, adminToken));
    const flow = await api('POST', `/api/v1/applications/${applicationId}/flows`, {
      name: 'Newsletter',
      pattern: 'informed',
      purposes: ['newsletter'],
      purpose_definitions: { newsletter: { label: 'Newsletter', basis: 'consent' } },
      consent_duration: 'P1Y',
      policy_url: 'https://example.com/privacy',
    });
    flowId = flow.body.id;
    expect((await api('POST', `/api/v1/flows/${flowId}/activate`)).status).toBe(200);
    await completedDecision();
    await settled();
  });

  afterAll(async () => {
    await db?.end();
    await us?.close();
    await de?.close();
    await witness?.close();
  });

  it('appends every state change, with its actor, and the outcome to the application\'s hash chain', async () => {
    const exported = await entriesOf();
    const types = exported.entries.map((entry: { event_type: string }) => entry.event_type);
    expect(types.slice(0, 2)).toEqual(['credential.api_token_created', 'flow.activated']);
    expect(types).toEqual(expect.arrayContaining(['decision.state_changed', 'consent.granted']));
    expect(exported.entries.map((entry: { seq: number }) => entry.seq)).toEqual(types.map((_: string, i: number) => i + 1));
    expect(exported.entries[0].prev_hash).toBe('0'.repeat(64));
    expect(checkAuditChain(exported.entries)).toMatchObject({ valid: true, findings: [] });
    expect(exported.hash_rule).toContain('RFC 8785');

    const changes = exported.entries.filter((entry: { event_type: string }) => entry.event_type === 'decision.state_changed');
    expect(changes.map((entry: { actor: { type: string } }) => entry.actor.type)).toEqual(['application', 'participant', 'participant', 'participant']);
    expect(exported.entries[0].actor).toEqual({ type: 'operator' });
    expect(exported.entries[1].actor).toEqual({ type: 'application' });

    // The digest is of the event's payload as the producer wrote it (kept with the entry).
    const { rows } = await db.query(`SELECT payload FROM audit_chain.entries WHERE source = 'decisions' AND event_type = 'consent.granted'`);
    expect(rows).toHaveLength(1);
    expect(rows[0].payload).toMatchObject({ flow_id: flowId, outcome: 'granted' });
    const granted = exported.entries.find((entry: { event_type: string }) => entry.event_type === 'consent.granted');
    expect(granted.payload_digest).toBe(auditPayloadDigest(rows[0].payload));
  });

  it('documents the audit, anchor and witness endpoints in the OpenAPI document', async () => {
    const document = (await http(us.url, 'GET', '/.well-known/openapi')).body;
    for (const path of [
      '/api/v1/applications/{application_id}/audit',
      '/api/v1/applications/{application_id}/audit/export',
      '/api/v1/applications/{application_id}/audit/entries/{entry_id}/inclusion_proof',
      '/api/v1/anchors',
      '/api/v1/anchors/consistency_proof',
      '/.well-known/witness-configuration',
      '/witness/add-checkpoint',
    ]) {
      expect(document.paths).toHaveProperty([path]);
    }
    expect(document.paths['/api/v1/applications/{application_id}/audit'].get.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['type', 'from', 'to', 'cursor', 'limit']),
    );
  });

  it('pages and filters the trail by type and time, and names bad parameters', async () => {
    const all = (await entriesOf()).entries;
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { data: Array<{ entry_id: string }>; next_cursor: string | null } } = await api(
        'GET',
        `/api/v1/applications/${applicationId}/audit?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.status).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.data.map((entry) => entry.entry_id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all.map((entry: { entry_id: string }) => entry.entry_id));

    const granted = await api('GET', `/api/v1/applications/${applicationId}/audit?type=consent.granted,flow.activated`);
    expect(granted.body.data.map((entry: { event_type: string }) => entry.event_type).sort()).toEqual(['consent.granted', 'flow.activated']);
    const future = await api('GET', `/api/v1/applications/${applicationId}/audit?from=${encodeURIComponent(new Date(Date.now() + 3600_000).toISOString())}`);
    expect(future.body.data).toEqual([]);
    const past = await api('GET', `/api/v1/applications/${applicationId}/audit?to=${encodeURIComponent(new Date(Date.now() + 3600_000).toISOString())}`);
    expect(past.body.data).toHaveLength(all.length);

    const badType = await api('GET', `/api/v1/applications/${applicationId}/audit?type=Not%20A%20Type`);
    expect(badType.status).toBe(400);
    expect(badType.body.details[0].field).toBe('type');
    const badFrom = await api('GET', `/api/v1/applications/${applicationId}/audit?from=yesterday`);
    expect(badFrom.status).toBe(400);
    expect(badFrom.body.details[0].field).toBe('from');
    const badCursor = await api('GET', `/api/v1/applications/${applicationId}/audit?cursor=${Buffer.from('{"after":"x"}').toString('base64url')}`);
    expect(badCursor.status).toBe(400);
  });

  it('appends every change of credentials and allowed origins, with who made it and no secret', async () => {
    const added = await api('POST', `/api/v1/applications/${applicationId}/allowed_origins`, { allowed_origin: { origin: 'https://shop.example.com' } });
    expect(added.status).toBe(201);
    const key = await api('POST', `/api/v1/applications/${applicationId}/publishable_keys`);
    expect(key.status).toBe(201);
    expect((await api('DELETE', `/api/v1/applications/${applicationId}/publishable_keys/${key.body.id}`)).status).toBe(204);
    expect((await api('DELETE', `/api/v1/applications/${applicationId}/allowed_origins/${encodeURIComponent('https://shop.example.com')}`)).status).toBe(204);
    const types = ['allowed_origin.added', 'credential.publishable_key_created', 'credential.publishable_key_revoked', 'allowed_origin.removed'];
    let page: { body: { data: Array<{ event_type: string; actor: { type: string; id?: string } }> } } = { body: { data: [] } };
    await eventually(async () => {
      page = await api('GET', `/api/v1/applications/${applicationId}/audit?type=${types.join(',')}`);
      return page.body.data.length === 4;
    });
    expect(page.body.data.map((entry) => entry.event_type)).toEqual(types);
    const tokenId = (await api('GET', '/api/v1/me')).body.credential.id;
    expect(tokenId).toMatch(/\w/);
    for (const entry of page.body.data) expect(entry.actor).toEqual({ type: 'application', id: tokenId });
    const { rows } = await db.query(`SELECT payload::text AS payload FROM audit_chain.entries WHERE event_type = 'credential.publishable_key_created'`);
    expect(rows[0].payload).not.toContain(key.body.key);
  });

  it('scopes the trail to the caller\'s account and to the audit:verify scope', async () => {
    const { apiToken: otherToken } = await applicationWithToken(us, adminToken, { name: 'Other', environment: 'sandbox' });
    const foreign = await api('GET', `/api/v1/applications/${applicationId}/audit`, undefined, otherToken);
    expect(foreign.status).toBe(404);
    expect((await api('GET', `/api/v1/applications/${applicationId}/audit/export`, undefined, otherToken)).status).toBe(404);

    const narrow = await http(us.url, 'POST', `/api/v1/applications/${applicationId}/api_tokens`, { token: adminToken, body: { scopes: ['applications:read'] } });
    const forbidden = await api('GET', `/api/v1/applications/${applicationId}/audit`, undefined, narrow.body.token);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.message).toContain('audit:verify');
  });

  it('appends a redelivered outbox event exactly once', async () => {
    await settled();
    const before = await trailSize();
    // What a relay that stopped after the trail committed, and before its deletion did, leaves behind:
    // the rows of events already on the trail, which it sends again.
    for (const source of ['decisions', 'gateway']) {
      const redelivered = await db.query(
        `INSERT INTO ${source}.outbox ("id", "type", "application_id", "internal", "data", "occurred_at")
         SELECT "source_event_id", "event_type", "application_id", "event_type" = 'decision.state_changed', "payload", "occurred_at"
           FROM audit_chain.entries WHERE "source" = $1`,
        [source],
      );
      expect(redelivered.rowCount).toBeGreaterThan(0);
    }
    await settled();
    expect(await trailSize()).toBe(before);
    await completedDecision();
    await settled();
    expect(await trailSize()).toBe(before + 5);
  });

  it('anchors the tree in a signed checkpoint cosigned by the peer country and the external witness', async () => {
    const created = await http(us.url, 'POST', '/api/v1/anchors', { token: adminToken });
    expect(created.status).toBe(200);
    const anchor = created.body;
    expect(anchor.id).toMatch(/^anc_/);
    expect(anchor.country).toBe('US');
    expect(anchor.tree_size).toBe(await trailSize());

    const usConfig = (await http(us.url, 'GET', '/.well-known/witness-configuration')).body;
    const deConfig = (await http(de.url, 'GET', '/.well-known/witness-configuration')).body;
    expect(usConfig.log.origin).toBe(ORIGIN);
    expect(usConfig.log.checkpoint_keys).toEqual([expect.objectContaining({ verifier_key: noteSignerFromKey(logKey.signerKey).verifierKey, status: 'current' })]);
    const opened = openNote(anchor.checkpoint, [parseVerifierKey(usConfig.log.checkpoint_keys[0].verifier_key)]);
    const checkpoint = parseCheckpoint(opened.text);
    expect(checkpoint).toMatchObject({ origin: ORIGIN, size: anchor.tree_size });
    expect(checkpoint.rootHash.toString('hex')).toBe(anchor.merkle_root);

    const witnessKeys = [parseVerifierKey(deConfig.witness.cosignature_keys[0].verifier_key), parseVerifierKey(witness.cosigner.verifierKey)];
    expect(anchor.witness_receipts.map((receipt: { witness: string }) => receipt.witness).sort()).toEqual(witnessKeys.map((key) => key.name).sort());
    for (const receipt of anchor.witness_receipts) {
      const key = witnessKeys.find((candidate) => candidate.name === receipt.witness)!;
      const bytes = Buffer.from(receipt.signature, 'base64');
      const checked = verifyCosignature(key, opened.text, { name: receipt.witness, keyId: bytes.subarray(0, 4), signature: bytes.subarray(4), line: receipt.cosignature });
      expect(checked).not.toBeNull();
      expect(new Date(receipt.signed_at).getTime()).toBe(checked!.timestamp * 1000);
    }
    // The stored note carries every cosignature, so it verifies with the witnesses' keys alone too.
    expect(openNote(anchor.checkpoint, witnessKeys).verified).toHaveLength(2);

    const listed = await api('GET', '/api/v1/anchors');
    expect(listed.status).toBe(200);
    expect(listed.body.data[0]).toEqual(anchor);
    // Anchoring again without new entries answers the same anchor.
    expect((await http(us.url, 'POST', '/api/v1/anchors', { token: adminToken })).body.id).toBe(anchor.id);
  });

  it('proves inclusion of an entry and consistency between anchors; the witness gets a proof from where it stands', async () => {
    const first = (await api('GET', '/api/v1/anchors')).body.data[0];
    const entry = (await entriesOf()).entries[2];
    const inclusion = await api('GET', `/api/v1/applications/${applicationId}/audit/entries/${entry.entry_id}/inclusion_proof`);
    expect(inclusion.status).toBe(200);
    expect(inclusion.body.tree_size).toBe(first.tree_size);
    expect(verifyInclusion(inclusion.body.leaf_index, first.tree_size, leafHash(hex(entry.hash)), inclusion.body.proof.map(hex), hex(first.merkle_root))).toBe(true);

    await completedDecision();
    await settled();
    // The log forgets where the external witness stands: the witness answers 409 with its size and
    // the log retries from there with a consistency proof.
    await db.query(`DELETE FROM audit_chain.witness_positions WHERE witness = $1`, [witness.cosigner.name]);
    const second = (await http(us.url, 'POST', '/api/v1/anchors', { token: adminToken })).body;
    expect(second.tree_size).toBe(first.tree_size + 5);
    expect(second.witness_receipts).toHaveLength(2);
    expect(witness.requests.slice(-2)).toEqual([
      { oldSize: 0, proofLength: 0, size: second.tree_size, status: 409 },
      { oldSize: first.tree_size, proofLength: expect.any(Number), size: second.tree_size, status: 200 },
    ]);
    expect(witness.requests[witness.requests.length - 1].proofLength).toBeGreaterThan(0);

    const consistency = await api('GET', `/api/v1/anchors/consistency_proof?from_size=${first.tree_size}&to_size=${second.tree_size}`);
    expect(consistency.status).toBe(200);
    expect(consistency.body).toMatchObject({ from_root: first.merkle_root, to_root: second.merkle_root });
    expect(verifyConsistency(first.tree_size, second.tree_size, consistency.body.proof.map(hex), hex(first.merkle_root), hex(second.merkle_root))).toBe(true);

    const beyond = await api('GET', `/api/v1/anchors/consistency_proof?from_size=1&to_size=${second.tree_size + 100}`);
    expect(beyond.status).toBe(422);
    expect(beyond.body.details[0].field).toBe('to_size');
    expect((await api('GET', '/api/v1/anchors/consistency_proof?from_size=x&to_size=2')).body.details[0].field).toBe('from_size');
    expect((await api('GET', `/api/v1/applications/${applicationId}/audit/entries/aud_00000000000000000000/inclusion_proof`)).status).toBe(404);
  });

  it('the peer country\'s witness refuses a rollback, a fork, an unknown key and an unknown origin', async () => {
    const newest = (await api('GET', '/api/v1/anchors')).body.data[0];
    const send = (body: string) => http(de.url, 'POST', '/witness/add-checkpoint', { rawBody: body, headers: { 'content-type': 'text/plain' } });
    const signer = noteSignerFromKey(logKey.signerKey);
    const noteFor = (size: number, root: Buffer, signers = [signer], origin = ORIGIN) => signNote(formatCheckpoint({ origin, size, rootHash: root, extensions: [] }), signers);

    const stale = await send(formatAddCheckpointRequest({ oldSize: 0, consistencyProof: [], checkpointNote: newest.checkpoint.split('\n\n')[0] + '\n\n' + parseNote(newest.checkpoint).signatures[0].line + '\n' }));
    expect(stale.status).toBe(409);
    expect(stale.headers.get('content-type')).toContain('text/x.tlog.size');
    expect(String(stale.body).trim()).toBe(String(newest.tree_size));

    const fork = await send(formatAddCheckpointRequest({ oldSize: newest.tree_size, consistencyProof: [], checkpointNote: noteFor(newest.tree_size, Buffer.alloc(32, 7)) }));
    expect(fork.status).toBe(422);
    // A checkpoint smaller than the size the log claims the witness holds: the library will not even format it.
    const rollback = await send(`old ${newest.tree_size}\n\n${noteFor(newest.tree_size - 1, Buffer.alloc(32, 7))}`);
    expect(rollback.status).toBe(400);
    // Malformed, however short or long: 400 in plain text (422 would tell the log its proof failed, a fork).
    for (const body of ['', 'hello', `old 1\n\n${'x'.repeat(70 * 1024)}`]) {
      const malformed = await send(body);
      expect(malformed.status).toBe(400);
      expect(malformed.headers.get('content-type')).toContain('text/plain');
      expect(String(malformed.body)).toContain('malformed add-checkpoint request');
    }
    const older = await send(formatAddCheckpointRequest({ oldSize: newest.tree_size - 1, consistencyProof: [], checkpointNote: noteFor(newest.tree_size - 1, Buffer.alloc(32, 7)) }));
    expect(older.status).toBe(409);
    const unproven = await send(formatAddCheckpointRequest({ oldSize: newest.tree_size, consistencyProof: [Buffer.alloc(32, 1)], checkpointNote: noteFor(newest.tree_size + 3, Buffer.alloc(32, 9)) }));
    expect(unproven.status).toBe(422);
    const stranger = noteSignerFromKey(generateNoteKey(ORIGIN).signerKey);
    const foreignKey = await send(formatAddCheckpointRequest({ oldSize: newest.tree_size, consistencyProof: [], checkpointNote: noteFor(newest.tree_size, hex(newest.merkle_root), [stranger]) }));
    expect(foreignKey.status).toBe(403);
    const unknown = await send(formatAddCheckpointRequest({ oldSize: 0, consistencyProof: [], checkpointNote: noteFor(5, Buffer.alloc(32, 1), [signer], 'nobody.invalid/log') }));
    expect(unknown.status).toBe(404);
    expect((await send('not a request')).status).toBe(400);

    // What the witness cosigned is persisted: its state is the newest anchor, whatever was refused.
    const deDb = new Client({ connectionString: de.database.url });
    await deDb.connect();
    try {
      const { rows } = await deDb.query('SELECT tree_size, root_hash FROM audit_chain.witnessed_logs WHERE origin = $1', [ORIGIN]);
      expect(rows).toEqual([{ tree_size: String(newest.tree_size), root_hash: newest.merkle_root }]);
    } finally {
      await deDb.end();
    }
  });

  describe('the offline verifier', () => {
    let folder: string;
    let keyFiles: string[];

    async function verifyExport(app = applicationId, token = apiToken) {
      const exported = await entriesOf(app, token);
      const path = join(folder, `export-${Date.now()}-${Math.random()}.json`);
      writeFileSync(path, JSON.stringify(exported));
      const lines: string[] = [];
      const status = verifyCli([path, ...keyFiles.flatMap((file) => ['--keys', file]), '--min-witnesses', '2', '--json'], (line) => lines.push(line));
      return { status, report: JSON.parse(lines.join("\n")), exported, path };
    }

    beforeAll(async () => {
      folder = mkdtempSync(join(tmpdir(), 'audit-verify-'));
      const documents = {
        us: (await http(us.url, 'GET', '/.well-known/witness-configuration')).body,
        de: (await http(de.url, 'GET', '/.well-known/witness-configuration')).body,
        external: { witness: { name: witness.cosigner.name, cosignature_keys: [{ verifier_key: witness.cosigner.verifierKey }] } },
      };
      keyFiles = Object.entries(documents).map(([name, document]) => {
        const path = join(folder, `${name}.json`);
        writeFileSync(path, JSON.stringify(document));
        return path;
      });
    });

    it('verifies an untouched export, also through the npx command', async () => {
      const { status, report, exported, path } = await verifyExport();
      expect(status).toBe(0);
      expect(report).toMatchObject({ valid: true, entries: exported.entries.length, first_bad_entry: null });
      expect(report.anchored_entries).toBe(exported.inclusion_proofs.length);
      expect(report.anchor.witnesses).toHaveLength(2);
      const output = execFileSync(process.execPath, [join(__dirname, '../../libs/audit-verifier/bin/dcr-audit-verify.js'), path, ...keyFiles.flatMap((file) => ['--keys', file])], { encoding: 'utf8' });
      expect(output).toMatch(/^VALID: /);
    });

    it('verifies an export longer than one message on the bus carries, read in parts against one anchor', async () => {
      const app = await http(us.url, 'POST', '/api/v1/applications', { token: adminToken, body: { name: 'Busy', environment: 'sandbox' } });
      const issued = await http(us.url, 'POST', `/api/v1/applications/${app.body.id}/api_tokens`, { token: adminToken, body: {} });
      expect(issued.status).toBe(201);
      await settled();
      // 3,000 events on the application's chain, as the outbox relays send them (200 a request).
      const client = countryClient(us);
      const at = Date.now();
      for (let batch = 0; batch < 15; batch++) {
        const events = Array.from({ length: 200 }, (_, i) => ({
          id: `bulk_b${String(batch).padStart(2, '0')}e${String(i).padStart(4, '0')}`,
          type: 'consent.granted',
          application_id: app.body.id,
          actor: { type: 'application' },
          occurred_at: new Date(at + batch * 200 + i).toISOString(),
          payload: { n: batch * 200 + i },
        }));
        await lastValueFrom(client.send(AUDIT_APPEND, { source: 'bulk', events }));
      }
      await client.close();
      expect((await http(us.url, 'POST', '/api/v1/anchors', { token: adminToken })).status).toBe(200);
      const { status, report, exported } = await verifyExport(app.body.id, issued.body.token);
      expect(Buffer.byteLength(JSON.stringify(exported))).toBeGreaterThan(1024 * 1024);
      expect(exported.entries.length).toBeGreaterThan(3000);
      expect(exported.entries.map((entry: { seq: number }) => entry.seq)).toEqual(exported.entries.map((_: unknown, i: number) => i + 1));
      expect(exported.inclusion_proofs).toHaveLength(exported.entries.length);
      expect(new Set(exported.inclusion_proofs.map((proof: { tree_size: number }) => proof.tree_size))).toEqual(new Set([exported.anchor.tree_size]));
      expect([status, report.valid, report.anchored_entries]).toEqual([0, true, exported.entries.length]);
    }, 120000);

    it('names an entry edited in the database and flags every later entry', async () => {
      const { rows } = await db.query(`SELECT event_type FROM audit_chain.entries WHERE application_id = $1 AND seq = 3`, [applicationId]);
      await db.query(`UPDATE audit_chain.entries SET event_type = 'consent.denied' WHERE application_id = $1 AND seq = 3`, [applicationId]);
      try {
        const { status, report, exported } = await verifyExport();
        expect(status).toBe(1);
        expect(report.first_bad_entry).toMatchObject({ seq: 3, entry_id: exported.entries[2].entry_id });
        expect(report.first_bad_entry.reason).toContain('edited');
        expect(report.untrusted_entry_ids).toEqual(exported.entries.slice(2).map((entry: { entry_id: string }) => entry.entry_id));
      } finally {
        await db.query(`UPDATE audit_chain.entries SET event_type = $2 WHERE application_id = $1 AND seq = 3`, [applicationId, rows[0].event_type]);
      }
      expect((await verifyExport()).status).toBe(0);
    });

    it('names the gap where an entry was removed', async () => {
      const { rows } = await db.query(`DELETE FROM audit_chain.entries WHERE application_id = $1 AND seq = 4 RETURNING *`, [applicationId]);
      try {
        const { status, report, exported } = await verifyExport();
        expect(status).toBe(1);
        const after = exported.entries.find((entry: { seq: number }) => entry.seq === 5);
        expect(report.first_bad_entry).toMatchObject({ seq: 5, entry_id: after.entry_id });
        expect(report.first_bad_entry.reason).toContain('missing');
        expect(report.findings).toEqual(expect.arrayContaining([expect.objectContaining({ area: 'chain', kind: 'missing_entries', after_seq: 3, next_seq: 5 })]));
      } finally {
        const row = rows[0];
        await db.query(
          `INSERT INTO audit_chain.entries SELECT * FROM json_populate_record(NULL::audit_chain.entries, $1::json)`,
          [JSON.stringify(row)],
        );
      }
      expect((await verifyExport()).status).toBe(0);
    });

    it('rejects a forged anchor', async () => {
      const newest = (await api('GET', '/api/v1/anchors')).body.data[0];
      const forger = noteSignerFromKey(generateNoteKey(ORIGIN).signerKey);
      const forgedRoot = Buffer.alloc(32, 3);
      const forged = signNote(formatCheckpoint({ origin: ORIGIN, size: newest.tree_size, rootHash: forgedRoot, extensions: [] }), [forger]);
      await db.query(`UPDATE audit_chain.anchors SET merkle_root = $2, checkpoint = $3 WHERE id = $1`, [newest.id, forgedRoot.toString('hex'), forged]);
      try {
        const { status, report } = await verifyExport();
        expect(status).toBe(1);
        expect(report.findings).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ area: 'anchor', kind: 'unsigned', anchor_id: newest.id }),
            expect.objectContaining({ area: 'witness', kind: 'invalid_cosignature' }),
          ]),
        );
        expect(report.first_bad_entry).not.toBeNull();
      } finally {
        await db.query(`UPDATE audit_chain.anchors SET merkle_root = $2, checkpoint = $3 WHERE id = $1`, [newest.id, newest.merkle_root, newest.checkpoint]);
      }
      expect((await verifyExport()).status).toBe(0);
      // Without the published keys nothing about the anchor can be trusted.
      expect(verifyAuditExport(await entriesOf(), [], { minWitnesses: 0 }).findings).toEqual(
        expect.arrayContaining([expect.objectContaining({ area: 'anchor', kind: 'unsigned' })]),
      );
    });
  });
});
