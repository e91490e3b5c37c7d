import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { ApplicationSnapshot } from '@dcr/contracts';
import { recordEvent } from '@dcr/service-kit';
import { DataSource, EntityManager, In, MoreThan } from 'typeorm';
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
    return this.dataSource.getRepository(AllowedOriginRecord).find({ where: { applicationId }, order: { createdAt: 'ASC' } });
  }

  async snapshot(applicationId: string): Promise<ApplicationSnapshot | null> {
    const application = await this.findApplication(applicationId);
    if (!application) return null;
    const [tokens, keys, origins] = await Promise.all([
      this.listTokens(applicationId),
      this.listKeys(applicationId),
      this.listOrigins(applicationId),
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
   * the change's audit event commits with it (the outbox), so the trail never misses one.
   */
  async change<T>(applicationId: string, work: (manager: EntityManager) => Promise<T>, audit: ConfigurationChange): Promise<T> {
    const result = await this.dataSource.transaction(async (manager) => {
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
   * Stores a snapshot received from the authoring country, unless what is here is as new or newer.
   * Local token use times are kept: each country records the uses it sees.
   */
  async applySnapshot(snapshot: ApplicationSnapshot): Promise<boolean> {
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
      if (current && current.revision >= snapshot.revision) return false;
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
      const lastUse = new Map(
        (await manager.getRepository(ApiTokenRecord).find({ where: { applicationId: snapshot.id } })).map((t) => [
          t.id,
          t.lastUsedAt,
        ]),
      );
      await manager.getRepository(ApiTokenRecord).delete({ applicationId: snapshot.id });
      await manager.getRepository(PublishableKeyRecord).delete({ applicationId: snapshot.id });
      await manager.getRepository(AllowedOriginRecord).delete({ applicationId: snapshot.id });
      if (snapshot.api_tokens.length > 0) {
        await manager.getRepository(ApiTokenRecord).insert(
          snapshot.api_tokens.map((t) => ({
            id: t.id,
            applicationId: snapshot.id,
            name: t.name,
            tokenHash: t.token_hash,
            scopes: t.scopes,
            createdAt: new Date(t.created_at),
            lastUsedAt: lastUse.get(t.id) ?? null,
            revokedAt: t.revoked_at ? new Date(t.revoked_at) : null,
          })),
        );
      }
      if (snapshot.publishable_keys.length > 0) {
        await manager.getRepository(PublishableKeyRecord).insert(
          snapshot.publishable_keys.map((k) => ({
            id: k.id,
            applicationId: snapshot.id,
            keyHash: k.key_hash,
            keyPrefix: k.key_prefix,
            createdAt: new Date(k.created_at),
            revokedAt: k.revoked_at ? new Date(k.revoked_at) : null,
          })),
        );
      }
      if (snapshot.allowed_origins.length > 0) {
        await manager.getRepository(AllowedOriginRecord).insert(
          snapshot.allowed_origins.map((o) => ({
            applicationId: snapshot.id,
            origin: o.origin,
            createdAt: new Date(o.created_at),
          })),
        );
      }
      return true;
    });
  }

  /** Writes the last-use times gathered in memory since the previous flush, one statement. */
  async recordTokenUses(uses: Map<string, Date>): Promise<void> {
    if (uses.size === 0) return;
    const ids = [...uses.keys()];
    const times = ids.map((id) => uses.get(id)!.toISOString());
    await this.dataSource.query(
      `UPDATE "gateway"."api_tokens" AS t SET last_used_at = u.used_at
       FROM unnest($1::text[], $2::timestamptz[]) AS u(id, used_at)
       WHERE t.id = u.id AND (t.last_used_at IS NULL OR t.last_used_at < u.used_at)`,
      [ids, times],
    );
  }
}
