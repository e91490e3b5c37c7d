import { Inject, Injectable } from '@nestjs/common';
import { DomainError, newApplicationId, newOpaqueId, Page, validationFailed } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { Principal, requireApplicationAccess } from '../auth/principal';
import { pageOf } from '../http/paging';
import { ConfigReplicator } from './config-replicator';
import { ApplicationDto, CreateApplicationDto, ListQueryDto, UpdateApplicationSettingsDto } from './connect.dto';
import { AllowedOriginRecord, ApplicationRecord } from './connect.entities';
import { actorOfPrincipal } from './configuration-audit';
import { ConnectRepository } from './connect.repository';
import { CredentialIndex } from './credential-index';
import { IsNull } from 'typeorm';

export const toApplicationDto = (a: ApplicationRecord): ApplicationDto => ({
  id: a.id,
  name: a.name,
  environment: a.environment,
  region: a.region,
  account_id: a.accountId,
  settings: { browser_commit: a.browserCommit },
  created_at: a.createdAt.toISOString(),
});

@Injectable()
export class ApplicationsService {
  constructor(
    private readonly repository: ConnectRepository,
    private readonly index: CredentialIndex,
    private readonly replicator: ConfigReplicator,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  /** The admin token opens a new account; an API token creates the application in its own account. */
  async create(principal: Principal, input: CreateApplicationDto): Promise<ApplicationDto> {
    const region = this.context.env.REGION;
    if (input.region !== undefined && input.region !== region) {
      throw new DomainError('validation_failed', 'The region must be this deployment’s region', [
        { field: 'region', reason: `must be ${region}` },
      ]);
    }
    if (principal.kind === 'publishable_key') throw new DomainError('forbidden', 'Publishable keys cannot create applications');
    const now = new Date();
    const record = Object.assign(new ApplicationRecord(), {
      id: newApplicationId(region),
      accountId: principal.kind === 'admin' ? newOpaqueId('acc_') : principal.application.accountId,
      name: input.name.trim(),
      environment: input.environment,
      region,
      authoredIn: this.context.env.COUNTRY,
      revision: 1,
      browserCommit: false,
      createdAt: now,
      updatedAt: now,
    });
    await this.repository.createApplication(record);
    await this.replicator.changed(record.id);
    return toApplicationDto(record);
  }

  async list(principal: Principal, query: ListQueryDto): Promise<Page<ApplicationDto>> {
    if (principal.kind === 'admin') throw new DomainError('forbidden', 'The admin token lists no account; use an API token');
    const applications = await this.repository.listApplications(principal.application.accountId);
    return pageOf(applications.map(toApplicationDto), (a) => [a.created_at, a.id], query, `applications:${principal.application.accountId}`);
  }

  async get(principal: Principal, id: string): Promise<ApplicationDto> {
    requireApplicationAccess(principal, this.index.application(id));
    const record = await this.repository.findApplication(id);
    if (!record) throw new DomainError('not_found', 'Application was not found');
    return toApplicationDto(record);
  }

  /**
   * Changes the application's settings. Browser commit needs at least one allowed origin; the
   * application row is locked first, as removing an origin does, so the two cannot race.
   */
  async updateSettings(principal: Principal, id: string, input: UpdateApplicationSettingsDto): Promise<ApplicationDto> {
    if (principal.kind === 'publishable_key') throw new DomainError('forbidden', 'Publishable keys cannot change settings');
    requireApplicationAccess(principal, this.index.application(id));
    if (input.browser_commit === undefined) throw validationFailed([{ field: 'browser_commit', reason: 'give the setting to change' }]);
    const browserCommit = input.browser_commit;
    const record = await this.repository.change(
      id,
      async (manager) => {
        const application = await manager.getRepository(ApplicationRecord).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
        if (!application) throw new DomainError('not_found', 'Application was not found');
        if (browserCommit && (await manager.getRepository(AllowedOriginRecord).count({ where: { removedAt: IsNull(), applicationId: id } })) === 0) {
          throw validationFailed([{ field: 'browser_commit', reason: 'needs at least one allowed origin; add one first' }]);
        }
        await manager.getRepository(ApplicationRecord).update({ id }, { browserCommit });
        return Object.assign(application, { browserCommit });
      },
      { type: 'application.settings_changed', actor: actorOfPrincipal(principal), detail: { browser_commit: browserCommit } },
    );
    await this.replicator.changed(id);
    return toApplicationDto(record);
  }
}
