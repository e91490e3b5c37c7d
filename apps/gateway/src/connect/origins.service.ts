import { Injectable } from '@nestjs/common';
import { DomainError, notFound, Page, validateAllowedOrigin } from '@dcr/domain';
import { Principal, requireApplicationAccess } from '../auth/principal';
import { pageOf } from '../http/paging';
import { ConfigReplicator } from './config-replicator';
import { AllowedOriginDto, ListQueryDto } from './connect.dto';
import { AllowedOriginRecord, ApplicationRecord } from './connect.entities';
import { actorOfPrincipal } from './configuration-audit';
import { ConnectRepository } from './connect.repository';
import { CredentialIndex } from './credential-index';
import { IsNull } from 'typeorm';

const toOriginDto = (o: AllowedOriginRecord): AllowedOriginDto => ({
  origin: o.origin,
  created_at: o.createdAt.toISOString(),
});

/** Allowed origins: where browser calls and embedded flows of an application may come from. */
@Injectable()
export class OriginsService {
  constructor(
    private readonly repository: ConnectRepository,
    private readonly index: CredentialIndex,
    private readonly replicator: ConfigReplicator,
  ) {}

  /** Adding an origin that is already registered answers the existing registration. */
  async add(principal: Principal, applicationId: string, input: string): Promise<{ origin: AllowedOriginDto; created: boolean }> {
    const application = requireApplicationAccess(principal, this.index.application(applicationId));
    const origin = validateAllowedOrigin(input, application.environment);
    const existing = (await this.repository.listOrigins(applicationId)).find((o) => o.origin === origin);
    if (existing) return { origin: toOriginDto(existing), created: false };
    // Added anew, also over a removed one (kept for the countries to merge removals): the addition's time decides.
    const record = Object.assign(new AllowedOriginRecord(), { applicationId, origin, createdAt: new Date(), removedAt: null });
    await this.repository.change(
      applicationId,
      (manager) =>
        manager.query(
          `INSERT INTO "gateway"."allowed_origins" ("application_id", "origin", "created_at", "removed_at") VALUES ($1, $2, $3, NULL)
           ON CONFLICT ("application_id", "origin") DO UPDATE SET "created_at" = EXCLUDED."created_at", "removed_at" = NULL
           WHERE "allowed_origins"."removed_at" IS NOT NULL`,
          [applicationId, origin, record.createdAt],
        ),
      { type: 'allowed_origin.added', actor: actorOfPrincipal(principal), detail: { origin } },
    );
    await this.replicator.changed(applicationId);
    return { origin: toOriginDto(record), created: true };
  }

  async list(principal: Principal, applicationId: string, query: ListQueryDto): Promise<Page<AllowedOriginDto>> {
    requireApplicationAccess(principal, this.index.application(applicationId));
    const origins = await this.repository.listOrigins(applicationId);
    return pageOf(origins.map(toOriginDto), (o) => [o.created_at, o.origin], query, `allowed_origins:${applicationId}`);
  }

  async remove(principal: Principal, applicationId: string, input: string): Promise<void> {
    const application = requireApplicationAccess(principal, this.index.application(applicationId));
    let origin: string;
    try {
      origin = validateAllowedOrigin(input, application.environment);
    } catch {
      throw notFound('Allowed origin');
    }
    await this.repository.change(applicationId, async (manager) => {
      // Locked as changing settings locks it: browser commit is never left without an origin.
      const current = await manager.getRepository(ApplicationRecord).findOne({ where: { id: applicationId }, lock: { mode: 'pessimistic_write' } });
      if (current?.browserCommit && (await manager.getRepository(AllowedOriginRecord).count({ where: { applicationId, removedAt: IsNull() } })) === 1) {
        throw new DomainError('conflict', 'Browser commit is on and needs at least one allowed origin; turn it off first (PATCH …/settings)', [
          { field: 'browser_commit', reason: 'is on, and needs at least one allowed origin: turn it off before removing the last one' },
        ]);
      }
      // Kept, marked removed, so that the removal reaches the other countries and is merged there.
      const result = await manager.getRepository(AllowedOriginRecord).update({ applicationId, origin, removedAt: IsNull() }, { removedAt: new Date() });
      if (!result.affected) throw notFound('Allowed origin');
    }, { type: 'allowed_origin.removed', actor: actorOfPrincipal(principal), detail: { origin } });
    await this.replicator.changed(applicationId);
  }
}
