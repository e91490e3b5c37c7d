import { Injectable } from '@nestjs/common';
import { ApplicationSnapshot } from '@dcr/contracts';
import { originMatches } from '@dcr/domain';

export interface IndexedApplication {
  id: string;
  accountId: string;
  name: string;
  environment: 'sandbox' | 'production';
  origins: string[];
  /** Captures may be committed by the browser (needs allowed origins). */
  browserCommit: boolean;
}

export interface IndexedApiToken {
  id: string;
  application: IndexedApplication;
  scopes: string[];
}

/**
 * The gateway's in-memory view of every application's credentials and origins, rebuilt from
 * snapshots. Authentication is a hash lookup here, with no database or NATS round trip per request.
 */
@Injectable()
export class CredentialIndex {
  private readonly applications = new Map<string, IndexedApplication>();
  private readonly tokens = new Map<string, IndexedApiToken>();
  private readonly keys = new Map<string, IndexedApplication>();
  private readonly tokenHashesByApp = new Map<string, string[]>();
  private readonly keyHashesByApp = new Map<string, string[]>();
  private readonly revisions = new Map<string, number>();

  /** Replaces what is known of one application. */
  apply(snapshot: ApplicationSnapshot): void {
    const known = this.revisions.get(snapshot.id);
    if (known !== undefined && known > snapshot.revision) return;
    this.forget(snapshot.id);
    const application: IndexedApplication = {
      id: snapshot.id,
      accountId: snapshot.account_id,
      name: snapshot.name,
      environment: snapshot.environment,
      origins: snapshot.allowed_origins.filter((o) => !o.removed_at).map((o) => o.origin),
      browserCommit: snapshot.settings?.browser_commit ?? false,
    };
    this.applications.set(snapshot.id, application);
    this.revisions.set(snapshot.id, snapshot.revision);
    const tokenHashes: string[] = [];
    for (const token of snapshot.api_tokens) {
      if (token.revoked_at) continue;
      this.tokens.set(token.token_hash, { id: token.id, application, scopes: token.scopes });
      tokenHashes.push(token.token_hash);
    }
    const keyHashes: string[] = [];
    for (const key of snapshot.publishable_keys) {
      if (key.revoked_at) continue;
      this.keys.set(key.key_hash, application);
      keyHashes.push(key.key_hash);
    }
    this.tokenHashesByApp.set(snapshot.id, tokenHashes);
    this.keyHashesByApp.set(snapshot.id, keyHashes);
  }

  forget(applicationId: string): void {
    for (const hash of this.tokenHashesByApp.get(applicationId) ?? []) this.tokens.delete(hash);
    for (const hash of this.keyHashesByApp.get(applicationId) ?? []) this.keys.delete(hash);
    this.tokenHashesByApp.delete(applicationId);
    this.keyHashesByApp.delete(applicationId);
    this.applications.delete(applicationId);
  }

  tokenByHash(hash: string): IndexedApiToken | undefined {
    return this.tokens.get(hash);
  }

  applicationByKeyHash(hash: string): IndexedApplication | undefined {
    return this.keys.get(hash);
  }

  application(id: string): IndexedApplication | undefined {
    return this.applications.get(id);
  }

  /** Whether any application registered this origin: a preflight carries no credential to narrow it. */
  originKnown(origin: string): boolean {
    for (const application of this.applications.values()) {
      if (originMatches(origin, application.origins, application.environment)) return true;
    }
    return false;
  }
}
