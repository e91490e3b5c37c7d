import { Injectable } from '@nestjs/common';
import { AuditActor } from '@dcr/contracts';
import { declaredActor, OutboxEvent, OutboxRelay, ServiceClients } from '@dcr/service-kit';
import { DataSource } from 'typeorm';
import { Principal } from '../auth/principal';

/** A change of an application's credentials, allowed origins or settings, as it goes onto the audit trail. */
export interface ConfigurationChange {
  type:
    | 'credential.api_token_created'
    | 'credential.api_token_revoked'
    | 'credential.publishable_key_created'
    | 'credential.publishable_key_revoked'
    | 'allowed_origin.added'
    | 'allowed_origin.removed'
    | 'application.settings_changed';
  actor: AuditActor;
  /** Ids and public parts only: never a secret, never a hash of one. */
  detail: Record<string, unknown>;
}

/** Who made a configuration change: an operator (admin token) or the application (one of its API tokens). */
export function actorOfPrincipal(principal: Principal): AuditActor {
  if (principal.kind === 'admin') return { type: 'operator' };
  if (principal.kind === 'api_token') return { type: 'application', id: principal.tokenId };
  return { type: 'application' };
}

/** The gateway's outbox relay: configuration changes onto the country's audit trail. */
@Injectable()
export class ConfigurationAuditRelay extends OutboxRelay {
  constructor(dataSource: DataSource, clients: ServiceClients) {
    super(dataSource, clients, 'gateway');
  }

  protected actorOf(row: OutboxEvent): AuditActor {
    return declaredActor(row.data) ?? { type: 'system' };
  }
}
