import { ApplicationSnapshot } from '@dcr/contracts';
import { AllowedOriginRecord, ApiTokenRecord, ApplicationRecord, PublishableKeyRecord } from './connect.entities';

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** The replicated form of an application's configuration: credentials only as hashes. */
export function toSnapshot(
  application: ApplicationRecord,
  tokens: ApiTokenRecord[],
  keys: PublishableKeyRecord[],
  origins: AllowedOriginRecord[],
): ApplicationSnapshot {
  return {
    id: application.id,
    account_id: application.accountId,
    name: application.name,
    environment: application.environment,
    region: application.region,
    authored_in: application.authoredIn,
    revision: application.revision,
    settings: { browser_commit: application.browserCommit },
    created_at: application.createdAt.toISOString(),
    updated_at: application.updatedAt.toISOString(),
    api_tokens: tokens.map((token) => ({
      id: token.id,
      name: token.name,
      token_hash: token.tokenHash,
      scopes: token.scopes,
      created_at: token.createdAt.toISOString(),
      revoked_at: iso(token.revokedAt),
    })),
    publishable_keys: keys.map((key) => ({
      id: key.id,
      key_hash: key.keyHash,
      key_prefix: key.keyPrefix,
      created_at: key.createdAt.toISOString(),
      revoked_at: iso(key.revokedAt),
    })),
    allowed_origins: origins.map((origin) => ({
      origin: origin.origin,
      created_at: origin.createdAt.toISOString(),
      ...(origin.removedAt ? { removed_at: origin.removedAt.toISOString() } : {}),
    })),
  };
}
