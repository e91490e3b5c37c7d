import { Injectable } from '@nestjs/common';
import { AuditActor } from '@dcr/contracts';
import { declaredActor, OutboxEvent, OutboxRelay, ServiceClients } from '@dcr/service-kit';
import { DataSource } from 'typeorm';

/** The webhooks service's outbox: subscription changes and failed deliveries onto the audit trail. */
@Injectable()
export class WebhooksOutboxRelay extends OutboxRelay {
  constructor(dataSource: DataSource, clients: ServiceClients) {
    super(dataSource, clients, 'webhooks');
  }

  protected actorOf(row: OutboxEvent): AuditActor {
    return declaredActor(row.data) ?? { type: 'system' };
  }
}
