import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { ApplicationSnapshot } from '@dcr/contracts';
import { mergeCredentials, mergeOrigins } from '@dcr/domain';
import { recordEvent } from '@dcr/service-kit';
import { DataSource, EntityManager, In, IsNull, MoreThan } from 'typeorm';
import { toSnapshot } from './application-snapshot';
import { ConfigurationAuditRelay, ConfigurationChange } from './configuration-audit';
import { AllowedOriginRecord, ApiTokenRecord, ApplicationRecord, PublishableKeyRecord } from './connect.entities';

/**
 * Persistence of application configuration. Every change runs in one transaction that also bumps
 * the application's revision, so a replica can tell a newer snapshot from an older one.
 */
@Injectable()
export class ConnectRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly audit: ConfigurationAuditRelay,
  ) {}

  findApplication(id: string): Promise<ApplicationRecord | null> {
    return this.dataSource.getRepository(ApplicationRecord).findOne({ where: { id } });
  }

  listApplications(accountId: string): Promise<ApplicationRecord[]> {
    return this.dataSource.getRepository(ApplicationRecord).find({ where: { accountId }, order: { createdAt: 'ASC' } });
  }

  listTokens(applicationId: string): Promise<ApiTokenRecord[]> {
    return this.dataSource.getRepository(ApiTokenRecord).find({ where: { applicationId }, order: { createdAt: 'ASC' } });
  }

  listKeys(applicationId: string): Promise<PublishableKeyRecord[]> {
    return this.dataSource.getRepository(PublishableKeyRecord).find({ where: { applicationId }, order: { createdAt: 'ASC' } });
  }

  listOrigins(applicationId: string): Promise<AllowedOriginRecord[]> {
    return this.dataSource.getRepository(AllowedOriginRecord).find({ where: { applicationId, removedAt: IsNull() }, order: { createdAt: 'ASC' } });
  }

  async snapshot(applicationId: string): Promise<ApplicationSnapshot | null> {
    const application = await this.findApplication(applicationId);
    if (!application) return null;
    const [tokens, keys, origins] = await Promise.all([
      this.listTokens(applicationId),
      this.listKeys(applicationId),
      // Removed ones too: a removal travels to the peers like an addition.
      this.dataSource.getRepository(AllowedOriginRecord).find({ where: { applicationId }, order: { createdAt: 'ASC' } }),
    ]);
    return toSnapshot(application, tokens, keys, origins);
  }

  /** Snapshots of every application changed after `since` (all of them without it). */
  async snapshotsChangedSince(since?: Date): Promise<ApplicationSnapshot[]> {
    const applications = await this.dataSource
      .getRepository(ApplicationRecord)
      .find({ where: since ? { updatedAt: MoreThan(since) } : {}, order: { updatedAt: 'ASC' } });
    if (applications.length === 0) return [];
    const ids = applications.map((a) => a.id);
    const [tokens, keys, origins] = await Promise.all([
      this.dataSource.getRepository(ApiTokenRecord).find({ where: { applicationId: In(ids) } }),
      this.dataSource.getRepository(PublishableKeyRecord).find({ where: { applicationId: In(ids) } }),
      this.dataSource.getRepository(AllowedOriginRecord).find({ where: { applicationId: In(ids) } }),
    ]);
    const of = <T extends { applicationId: string }>(rows: T[], id: string) => rows.filter((r) => r.applicationId === id);
    return applications.map((a) => toSnapshot(a, of(tokens, a.id), of(keys, a.id), of(origins, a.id)));
  }

  async createApplication(application: ApplicationRecord): Promise<void> {
    await this.dataSource.getRepository(ApplicationRecord).insert(application);
  }

  /**
   * Runs a change to one application's configuration and bumps its revision in the same transaction;
   * the change's audit event commits with it (the outbox), so the trail never misses one. The
   * application's row is locked first, as a peer's snapshot of it locks it (applySnapshot) before
   * it touches a credential or an origin: a change here and a snapshot touching the same row (a
   * token both countries revoke at once) wait for each other; locking it last, after the work,
   * they deadlocked (test/configuration-lock-order.spec.ts).
   */
  async change<T>(applicationId: string, work: (manager: EntityManager) => Promise<T>, audit: ConfigurationChange): Promise<T> {
    const result = await this.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT 1 FROM "gateway"."applications" WHERE id = $1 FOR NO KEY UPDATE`, [applicationId]);
      const result = await work(manager);
      await manager.query(
        `UPDATE "gateway"."applications" SET revision = revision + 1, updated_at = now() WHERE id = $1`,
        [applicationId],
      );
      await recordEvent(manager, { type: audit.type, applicationId, internal: true, data: { ...audit.detail, actor: audit.actor } });
      return result;
    });
    this.audit.kick();
    return result;
  }

  /**
   * Stores a snapshot received from a peer country. Its application fields (name, settings) are
   * taken when its revision is newer than what is here (the newest revision wins). Its API tokens,
   * publishable keys and allowed origins are merged whatever its revision, so that two countries
   * changing one application at once (a token created in one while the other adds an origin) lose
   * nothing: credentials are only ever added and revoked (never un-revoked or deleted), so every one
   * either side has is kept, revoked if either side revoked it; an origin is added and removed, and
   * the later of the two, by its time, wins (a removed origin is kept with `removed_at`).
   * `peerBehind`: this country holds something the snapshot lacks or has older; the revision is then
   * bumped past both, so that the caller's
   * push of this country's state is newer for the peer and reaches it. Local token use times are
   * kept: each country records the uses it sees.
   */
  async applySnapshot(snapshot: ApplicationSnapshot): Promise<{ changed: boolean; peerBehind: boolean }> {
    return this.dataSource.transaction(async (manager) => {
      // One snapshot of an application at a time. The row lock below cannot do it for an application
      // this country has not stored yet (there is no row to lock): two snapshots arriving together
      // would both insert it, and the later revision, the one to keep, could fail on the duplicate
      // key and be lost until the application changed again.
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`gateway.application:${snapshot.id}`]);
      const current = await manager.getRepository(ApplicationRecord).findOne({
        where: { id: snapshot.id },
        lock: { mode: 'pessimistic_write' },
      });
      const newer = !current || current.revision < snapshot.revision;
      let changed = false;
      if (newer) {
        await manager.getRepository(ApplicationRecord).save({
          id: snapshot.id,
          accountId: snapshot.account_id,
          name: snapshot.name,
          environment: snapshot.environment,
          region: snapshot.region,
          authoredIn: snapshot.authored_in,
          revision: snapshot.revision,
          browserCommit: snapshot.settings?.browser_commit ?? false,
          createdAt: new Date(snapshot.created_at),
          updatedAt: new Date(snapshot.updated_at),
        });
        changed = true;
      }
      const originsMerged = await storeOriginMerge(manager, snapshot);
      const tokens = await manager.getRepository(ApiTokenRecord).find({ where: { applicationId: snapshot.id } });
      const keys = await manager.getRepository(PublishableKeyRecord).find({ where: { applicationId: snapshot.id } });
      const tokensMerged = await storeCredentialMerge(manager, ApiTokenRecord, tokens, snapshot.api_tokens, (t) => ({
        id: t.id,
        applicationId: snapshot.id,
        name: t.name,
        tokenHash: t.token_hash,
        scopes: t.scopes,
        createdAt: new Date(t.created_at),
        lastUsedAt: null,
        revokedAt: t.revoked_at ? new Date(t.revoked_at) : null,
      }));
      const keysMerged = await storeCredentialMerge(manager, PublishableKeyRecord, keys, snapshot.publishable_keys, (k) => ({
        id: k.id,
        applicationId: snapshot.id,
        keyHash: k.key_hash,
        keyPrefix: k.key_prefix,
        createdAt: new Date(k.created_at),
        revokedAt: k.revoked_at ? new Date(k.revoked_at) : null,
      }));
      changed ||= tokensMerged.changed || keysMerged.changed || originsMerged.changed;
      // Only a snapshot as new as this country's state says what the peer holds now; an older one may
      // be stale (the peer moved on since), and its next snapshot tells.
      const peerBehind = current !== null && current.revision <= snapshot.revision && (tokensMerged.peerBehind || keysMerged.peerBehind || originsMerged.peerBehind);
      if (peerBehind) {
        await manager.query(`UPDATE "gateway"."applications" SET revision = GREATEST(revision, $2) + 1, updated_at = now() WHERE id = $1`, [
          snapshot.id,
          snapshot.revision,
        ]);
      }
      return { changed: changed || peerBehind, peerBehind };
    });
  }

  /**
   * Writes the last-use times gathered in memory since the previous flush, one statement. Every
   * replica writes the tokens it saw, in the order it first saw them: the rows to change are locked
   * first in the order of their id (FOR UPDATE), so two replicas writing some of the same tokens at
   * once wait for each other instead of deadlocking (test/token-use-lock-order.spec.ts).
   */
  async recordTokenUses(uses: Map<string, Date>): Promise<void> {
    if (uses.size === 0) return;
    const ids = [...uses.keys()];
    const times = ids.map((id) => uses.get(id)!.toISOString());
    await this.dataSource.query(
      `UPDATE "gateway"."api_tokens" AS t SET last_used_at = u.used_at
       FROM unnest($1::text[], $2::timestamptz[]) AS u(id, used_at),
            (SELECT l.id FROM "gateway"."api_tokens" l JOIN unnest($1::text[], $2::timestamptz[]) AS w(id, used_at) ON w.id = l.id
              WHERE l.last_used_at IS NULL OR l.last_used_at < w.used_at
              ORDER BY l.id FOR UPDATE OF l) AS locked
       WHERE t.id = u.id AND t.id = locked.id AND (t.last_used_at IS NULL OR t.last_used_at < u.used_at)`,
      [ids, times],
    );
  }
}

/**
 * Stores the merge of a peer's credentials (API tokens or publishable keys) with this country's
 * (libs/domain mergeCredentials): the ones this country lacks, and the revocations to keep.
 */
async function storeCredentialMerge<R extends { id: string; revokedAt: Date | null }, M extends { id: string; revoked_at: string | null }>(
  manager: EntityManager,
  entity: new () => R,
  local: R[],
  theirs: M[],
  toRecord: (message: M) => Partial<R>,
): Promise<{ changed: boolean; peerBehind: boolean }> {
  const merge = mergeCredentials(
    local,
    theirs.map((message) => ({ id: message.id, revokedAt: message.revoked_at ? new Date(message.revoked_at) : null })),
  );
  const added = new Set(merge.added);
  if (added.size > 0) await manager.getRepository(entity).insert(theirs.filter((message) => added.has(message.id)).map(toRecord) as never);
  // In the order of their id, the order in which the replicas' writes of token uses lock them
  // (recordTokenUses): in the peer's order, the two deadlocked.
  const revoked = [...merge.revoked].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const { id, revokedAt } of revoked) await manager.getRepository(entity).update({ id } as never, { revokedAt } as never);
  return { changed: added.size > 0 || merge.revoked.length > 0, peerBehind: merge.peerBehind };
}

/** Stores the merge of a peer's allowed origins with this country's (libs/domain mergeOrigins). */
async function storeOriginMerge(manager: EntityManager, snapshot: ApplicationSnapshot): Promise<{ changed: boolean; peerBehind: boolean }> {
  const repository = manager.getRepository(AllowedOriginRecord);
  const here = await repository.find({ where: { applicationId: snapshot.id } });
  const there = snapshot.allowed_origins.map((o) => ({ origin: o.origin, createdAt: new Date(o.created_at), removedAt: o.removed_at ? new Date(o.removed_at) : null }));
  const { take, peerBehind } = mergeOrigins(here, there);
  for (const state of take) await repository.save({ applicationId: snapshot.id, ...state });
  return { changed: take.length > 0, peerBehind };
}
