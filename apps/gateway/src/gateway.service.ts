import { ServiceDefinition } from '@dcr/service-kit';
import { GATEWAY_ENTITIES, GatewayModule } from './gateway.module';
import { CreateConnect1763800000000 } from './migrations/1763800000000-create-connect';
import { CreateIdempotencyKeys1764000000000 } from './migrations/1764000000000-create-idempotency-keys';
import { CreateOutbox1764100000000 } from './migrations/1764100000000-create-outbox';
import { AddApplicationSettings1764500000000 } from './migrations/1764500000000-add-application-settings';
import { OutboxDeletesRelayedRows1765000000000 } from './migrations/1765000000000-outbox-deletes-relayed-rows';
import { OutboxRelaysByEventId1765300000000 } from './migrations/1765300000000-outbox-relays-by-event-id';
import { AllowedOriginsKeepRemovals1765800000000 } from './migrations/1765800000000-allowed-origins-keep-removals';

export const gatewayService: ServiceDefinition = {
  name: 'gateway',
  schema: 'gateway',
  entities: GATEWAY_ENTITIES,
  migrations: [CreateConnect1763800000000, CreateIdempotencyKeys1764000000000, CreateOutbox1764100000000, AddApplicationSettings1764500000000, OutboxDeletesRelayedRows1765000000000, OutboxRelaysByEventId1765300000000, AllowedOriginsKeepRemovals1765800000000],
  module: GatewayModule,
};
