import { firstValueFrom } from 'rxjs';
import { loadConfig, ReceiptsEnvironment } from '@dcr/config';
import { RECEIPTS_KEYS, ReceiptKeysReply } from '@dcr/contracts';
import { generateReceiptSigningKey, ReceiptSigningKey, signReceipt, verifySignedReceipt } from '@dcr/receipts';
import { countryContext, startService } from '@dcr/service-kit';
import { createTestDatabase, TestDatabase } from '@dcr/testing';
import { CountryClient, createTransportClient, InProcessBus } from '@dcr/transport';
import { receiptsService } from '../src/receipts.service';

/**
 * The receipts service's signing keys across a rotation (in-process transport, real PostgreSQL): the
 * new key is current in jwks.json, the old one stays published as retired with its validity window,
 * and a receipt signed before the rotation still verifies offline with that history.
 */
describe('receipt signing keys', () => {
  let database: TestDatabase;
  let bus: InProcessBus;
  let client: CountryClient;
  let service: { close(): Promise<void> } | undefined;

  async function start(key: ReceiptSigningKey) {
    const env = loadConfig(ReceiptsEnvironment, {
      COUNTRY: 'DE',
      REGION: 'dev',
      DATABASE_URL: database.url,
      TRANSPORT: 'inprocess',
      SUBJECT_REF_KEY: 'k'.repeat(40),
      NODE_ENV: 'production',
      PUBLIC_BASE_URL: 'https://de.decisions.example.com',
      LOG_LEVEL: 'warn',
      RECEIPT_SIGNING_KEY: JSON.stringify(key.privateJwk),
    });
    service = await startService(countryContext(receiptsService, env, { bus }));
  }

  const keys = () => firstValueFrom(client.send<ReceiptKeysReply>(RECEIPTS_KEYS, {}));

  beforeAll(async () => {
    database = await createTestDatabase('receipt_keys');
    bus = new InProcessBus();
    client = createTransportClient('inprocess', { bus, prefix: 'de' });
  });

  afterAll(async () => {
    await service?.close();
    await client?.close();
    await database?.drop();
  });

  it('publishes the current key, retires the old one at a rotation, and old signatures still verify', async () => {
    const first = await generateReceiptSigningKey('ES256');
    const second = await generateReceiptSigningKey('EdDSA');
    await start(first);
    expect((await keys()).jwks.keys.map((key) => key.kid)).toEqual([first.kid]);
    const receipt = { $schema: 'https://x.example/schemas/receipt/v2/record.json', record: { record_id: 'rec_de00000000000000000000' }, event: [] };
    const signedBefore = await signReceipt(receipt, first);

    await service!.close();
    await start(second);
    const published = await keys();
    expect(published.jwks.keys.map((key) => key.kid)).toEqual([second.kid]);
    expect(published.receipt_keys).toEqual([
      expect.objectContaining({ kid: second.kid, alg: 'EdDSA', status: 'current', valid_until: null }),
      expect.objectContaining({ kid: first.kid, alg: 'ES256', status: 'retired', valid_until: expect.any(String) }),
    ]);
    // Only the history knows the old key.
    expect(await verifySignedReceipt(signedBefore, { jwks: published.jwks as never })).toMatchObject({ valid: false, code: 'unknown_key' });
    expect(await verifySignedReceipt(signedBefore, { witnessConfiguration: { receipt_keys: published.receipt_keys } })).toMatchObject({ valid: true, kid: first.kid });
    // The retired key cannot sign anything new that the history would accept.
    const late = await signReceipt(receipt, first, { signedAt: new Date(Date.now() + 60_000) });
    expect(await verifySignedReceipt(late, { witnessConfiguration: { receipt_keys: published.receipt_keys } })).toMatchObject({ valid: false, code: 'key_not_valid_at_signing' });
  });
});
