import { ApplicationSnapshot } from '@dcr/contracts';

/** An API token of a peer's snapshot: unrevoked unless `revoked_at` is given. */
export interface SnapshotToken {
  id: string;
  token_hash: string;
  revoked_at?: string | null;
}

/**
 * A peer's snapshot of application `id` at `revision` (its `updated_at` a second later for each
 * revision), holding `tokens` and nothing else.
 */
export function peerSnapshot(id: string, revision: number, tokens: SnapshotToken[]): ApplicationSnapshot {
  return {
    id,
    account_id: 'acc_test',
    name: 'Acme',
    environment: 'sandbox',
    region: 'us',
    authored_in: 'US',
    revision,
    created_at: '2026-11-23T10:00:00.000Z',
    updated_at: new Date(Date.parse('2026-11-23T10:00:00.000Z') + revision * 1000).toISOString(),
    api_tokens: tokens.map((token) => ({
      id: token.id,
      name: null,
      token_hash: token.token_hash,
      scopes: ['applications:read'],
      created_at: '2026-11-23T10:00:01.000Z',
      revoked_at: token.revoked_at ?? null,
    })),
    publishable_keys: [],
    allowed_origins: [],
  };
}
