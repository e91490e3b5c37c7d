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
    const record = Object.assign(new AllowedOriginRecord(), { applicationId, origin, createdAt: new Date() });
    await this.repository.change(
      applicationId,
      (manager) => manager.getRepository(AllowedOriginRecord).createQueryBuilder().insert().values(record).orIgnore().execute(),
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
      if (current?.browserCommit && (await manager.getRepository(AllowedOriginRecord).count({ where: { applicationId } })) === 1) {
        throw new DomainError('conflict', 'Browser commit is on and needs at least one allowed origin; turn it off first (PATCH …/settings)');
      }
      const result = await manager.getRepository(AllowedOriginRecord).delete({ applicationId, origin });
      if (!result.affected) throw notFound('Allowed origin');
    }, { type: 'allowed_origin.removed', actor: actorOfPrincipal(principal), detail: { origin } });
    await this.replicator.changed(applicationId);
  }
}
