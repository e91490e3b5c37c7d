import { ImportRowInput } from '@dcr/contracts';
import { DryRunLedgerOfRun } from './dry-run-ledger';

const row = (email: string, extra: Partial<ImportRowInput> & { external_id?: string } = {}): ImportRowInput => ({
  subject: { email, ...(extra.external_id ? { external_id: extra.external_id } : {}) },
  decisions: {},
  captured_at: '2022-01-01T00:00:00Z',
  ...(extra.idempotency_key ? { idempotency_key: extra.idempotency_key } : {}),
});

describe('DryRunLedgerOfRun', () => {
  it('sends a chunk only what its rows meet: keys it repeats, people it names by address or external id', () => {
    const ledger = new DryRunLedgerOfRun();
    ledger.add({
      keys: [{ idempotency_key: 'k1', fingerprint: 'f1' }, { idempotency_key: 'k2', fingerprint: 'f2' }],
      people: [{ email: 'a@example.com', external_id: 'x' }, { email: 'b@example.com', external_id: null }],
    });
    expect(ledger.meets([row('c@example.com')])).toBeUndefined();
    expect(ledger.meets([row('c@example.com', { idempotency_key: 'k2' }), row(' A@Example.com ')])).toEqual({
      keys: [{ idempotency_key: 'k2', fingerprint: 'f2' }],
      people: [{ email: 'a@example.com', external_id: 'x' }],
    });
    // Named by someone else's external id: that person goes along, so the chunk sees the conflict.
    expect(ledger.meets([row('d@example.com', { external_id: 'x' })])).toEqual({ keys: [], people: [{ email: 'a@example.com', external_id: 'x' }] });
  });

  it('keeps the first body of a key and gives a person without an external id the one a later chunk gives them', () => {
    const ledger = new DryRunLedgerOfRun();
    ledger.add({ keys: [{ idempotency_key: 'k', fingerprint: 'first' }], people: [{ email: 'b@example.com', external_id: null }] });
    ledger.add({ keys: [{ idempotency_key: 'k', fingerprint: 'second' }], people: [{ email: 'b@example.com', external_id: 'y' }] });
    expect(ledger.meets([row('e@example.com', { idempotency_key: 'k', external_id: 'y' })])).toEqual({
      keys: [{ idempotency_key: 'k', fingerprint: 'first' }],
      people: [{ email: 'b@example.com', external_id: 'y' }],
    });
    ledger.add(undefined);
    expect(ledger.meets([row('b@example.com')])?.people).toEqual([{ email: 'b@example.com', external_id: 'y' }]);
  });
});
