import { Injectable } from '@nestjs/common';
import { IsNull } from 'typeorm';
import {
  grantedScopes,
  generateApiToken,
  generatePublishableKey,
  hashCredential,
  newApiTokenRecordId,
  newOpaqueId,
  notFound,
  Page,
} from '@dcr/domain';
import { Principal, requireApplicationAccess } from '../auth/principal';
import { pageOf } from '../http/paging';
import { ConfigReplicator } from './config-replicator';
import {
  ApiTokenDto,
  CreateApiTokenDto,
  CreatedApiTokenDto,
  CreatedPublishableKeyDto,
  ListQueryDto,
  PublishableKeyDto,
} from './connect.dto';
import { ApiTokenRecord, PublishableKeyRecord } from './connect.entities';
import { actorOfPrincipal } from './configuration-audit';
import { ConnectRepository } from './connect.repository';
import { CredentialIndex } from './credential-index';

const KEY_PREFIX_LENGTH = 12;

const toTokenDto = (t: ApiTokenRecord): ApiTokenDto => ({
  id: t.id,
  name: t.name,
  scopes: t.scopes,
  created_at: t.createdAt.toISOString(),
  last_used_at: t.lastUsedAt ? t.lastUsedAt.toISOString() : null,
});

const toKeyDto = (k: PublishableKeyRecord): PublishableKeyDto => ({
  id: k.id,
  key_prefix: k.keyPrefix,
  created_at: k.createdAt.toISOString(),
});

/** API tokens and publishable keys: values are shown once and kept only as SHA-256 hashes. */
@Injectable()
export class CredentialsService {
  constructor(
    private readonly repository: ConnectRepository,
    private readonly index: CredentialIndex,
    private readonly replicator: ConfigReplicator,
  ) {}

  async createApiToken(principal: Principal, applicationId: string, input: CreateApiTokenDto): Promise<CreatedApiTokenDto> {
    requireApplicationAccess(principal, this.index.application(applicationId));
    // A token grants no more than it holds; the operator's admin token holds every scope.
    const scopes = grantedScopes(input.scopes, principal.kind === 'api_token' ? principal.scopes : undefined);
    const token = generateApiToken();
    const record = Object.assign(new ApiTokenRecord(), {
      id: newApiTokenRecordId(),
      applicationId,
      name: input.name?.trim() ?? null,
      tokenHash: hashCredential(token),
      scopes,
      createdAt: new Date(),
      lastUsedAt: null,
      revokedAt: null,
    });
    await this.repository.change(applicationId, (manager) => manager.getRepository(ApiTokenRecord).insert(record), {
      type: 'credential.api_token_created',
      actor: actorOfPrincipal(principal),
      detail: { token_id: record.id, name: record.name, scopes },
    });
    await this.replicator.changed(applicationId);
    return { ...toTokenDto(record), token };
  }

  async listApiTokens(principal: Principal, applicationId: string, query: ListQueryDto): Promise<Page<ApiTokenDto>> {
    requireApplicationAccess(principal, this.index.application(applicationId));
    const tokens = (await this.repository.listTokens(applicationId)).filter((t) => !t.revokedAt);
    return pageOf(tokens.map(toTokenDto), (t) => [t.created_at, t.id], query, `api_tokens:${applicationId}`);
  }

  async revokeApiToken(principal: Principal, applicationId: string, tokenId: string): Promise<void> {
    requireApplicationAccess(principal, this.index.application(applicationId));
    // Throwing inside the change rolls it back, so an unknown id leaves the revision untouched.
    await this.repository.change(applicationId, async (manager) => {
      const result = await manager
        .getRepository(ApiTokenRecord)
        .update({ id: tokenId, applicationId, revokedAt: IsNull() }, { revokedAt: new Date() });
      if (!result.affected) throw notFound('API token');
    }, { type: 'credential.api_token_revoked', actor: actorOfPrincipal(principal), detail: { token_id: tokenId } });
    await this.replicator.changed(applicationId);
  }

  async createPublishableKey(principal: Principal, applicationId: string): Promise<CreatedPublishableKeyDto> {
    const application = requireApplicationAccess(principal, this.index.application(applicationId));
    const key = generatePublishableKey(application.environment);
    const record = Object.assign(new PublishableKeyRecord(), {
      id: newOpaqueId('pk_'),
      applicationId,
      keyHash: hashCredential(key),
      keyPrefix: key.slice(0, KEY_PREFIX_LENGTH),
      createdAt: new Date(),
      revokedAt: null,
    });
    await this.repository.change(applicationId, (manager) => manager.getRepository(PublishableKeyRecord).insert(record), {
      type: 'credential.publishable_key_created',
      actor: actorOfPrincipal(principal),
      detail: { key_id: record.id, key_prefix: record.keyPrefix },
    });
    await this.replicator.changed(applicationId);
    return { ...toKeyDto(record), key };
  }

  async listPublishableKeys(principal: Principal, applicationId: string, query: ListQueryDto): Promise<Page<PublishableKeyDto>> {
    requireApplicationAccess(principal, this.index.application(applicationId));
    const keys = (await this.repository.listKeys(applicationId)).filter((k) => !k.revokedAt);
    return pageOf(keys.map(toKeyDto), (k) => [k.created_at, k.id], query, `publishable_keys:${applicationId}`);
  }

  async revokePublishableKey(principal: Principal, applicationId: string, keyId: string): Promise<void> {
    requireApplicationAccess(principal, this.index.application(applicationId));
    // Throwing inside the change rolls it back, so an unknown id leaves the revision untouched.
    await this.repository.change(applicationId, async (manager) => {
      const result = await manager
        .getRepository(PublishableKeyRecord)
        .update({ id: keyId, applicationId, revokedAt: IsNull() }, { revokedAt: new Date() });
      if (!result.affected) throw notFound('Publishable key');
    }, { type: 'credential.publishable_key_revoked', actor: actorOfPrincipal(principal), detail: { key_id: keyId } });
    await this.replicator.changed(applicationId);
  }
}
