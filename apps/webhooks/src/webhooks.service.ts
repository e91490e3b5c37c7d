import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WebhooksEnvironment } from '@dcr/config';
import { OutboxEvent, ServiceDefinition } from '@dcr/service-kit';
import { DeliveriesReader } from './deliveries/deliveries-reader';
import { WebhookDeliveryAttempt } from './deliveries/delivery-attempt.entity';
import { DeliveryDispatcher } from './deliveries/delivery-dispatcher';
import { WebhookDelivery } from './deliveries/delivery.entity';
import { DeliveryQueue } from './deliveries/delivery-queue';
import { HttpSender } from './deliveries/http-sender';
import { CreateWebhooks1764200000000 } from './migrations/1764200000000-create-webhooks';
import { OutboxDeletesRelayedRows1765000000000 } from './migrations/1765000000000-outbox-deletes-relayed-rows';
import { OutboxRelaysByEventId1765300000000 } from './migrations/1765300000000-outbox-relays-by-event-id';
import { SubscriptionsReplicated1765800000000 } from './migrations/1765800000000-subscriptions-replicated';
import { SubscriptionsPreviousSecret1766000000000 } from './migrations/1766000000000-subscriptions-previous-secret';
import { DeliveriesDueByApplication1767000000000 } from './migrations/1767000000000-deliveries-due-by-application';
import { DeliveriesSayWhyTheyFailed1767100000000 } from './migrations/1767100000000-deliveries-say-why-they-failed';
import { WebhookSubscription } from './subscriptions/subscription.entity';
import { SubscriptionReplicator } from './subscriptions/subscription-replicator';
import { SubscriptionsService } from './subscriptions/subscriptions.service';
import { WebhooksController } from './webhooks.controller';
import { WebhooksOutboxRelay } from './webhooks-outbox';
import { WebhooksSettings } from './webhooks-settings';

export const WEBHOOKS_ENTITIES = [WebhookSubscription, WebhookDelivery, WebhookDeliveryAttempt, OutboxEvent];

/** Subscriptions (in force in every country), the durable delivery queue in PostgreSQL, and the workers that send it. */
@Module({
  imports: [ScheduleModule.forRoot(), TypeOrmModule.forFeature(WEBHOOKS_ENTITIES)],
  controllers: [WebhooksController],
  providers: [WebhooksSettings, WebhooksOutboxRelay, SubscriptionReplicator, SubscriptionsService, HttpSender, DeliveryDispatcher, DeliveriesReader, DeliveryQueue],
})
export class WebhooksModule {}

export const webhooksService: ServiceDefinition = {
  name: 'webhooks',
  schema: 'webhooks',
  entities: WEBHOOKS_ENTITIES,
  migrations: [CreateWebhooks1764200000000, OutboxDeletesRelayedRows1765000000000, OutboxRelaysByEventId1765300000000, SubscriptionsReplicated1765800000000, SubscriptionsPreviousSecret1766000000000, DeliveriesDueByApplication1767000000000, DeliveriesSayWhyTheyFailed1767100000000],
  module: WebhooksModule,
  environment: WebhooksEnvironment,
};
