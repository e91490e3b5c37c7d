import { Controller } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import {
  WEBHOOKS_CREATE,
  WEBHOOKS_DELETE,
  WEBHOOKS_DELIVERIES,
  WEBHOOKS_DELIVERY_GET,
  WEBHOOKS_DELIVERY_OWNER,
  WEBHOOKS_ENABLE,
  WEBHOOKS_ENQUEUE,
  WEBHOOKS_GET,
  WEBHOOKS_LIST,
  WEBHOOKS_REPLAY,
  WEBHOOKS_ROTATE_SECRET,
  WEBHOOKS_SUBSCRIPTIONS_CHANGED,
  WEBHOOKS_SUBSCRIPTIONS_SNAPSHOT,
  WEBHOOKS_TEST,
  WebhookActionRequest,
  WebhookCreateRequest,
  WebhookDeliveriesRequest,
  WebhookDeliveryOwnerRequest,
  WebhookDeliveryRequest,
  WebhookListRequest,
  WebhookRefRequest,
  WebhookReplayRequest,
  WebhooksEnqueueReply,
  WebhooksEnqueueRequest,
  WebhookSubscriptionsChangedEvent,
  WebhookSubscriptionsSnapshotReply,
  WebhookSubscriptionsSnapshotRequest,
} from '@dcr/contracts';
import { DeliveriesReader } from './deliveries/deliveries-reader';
import { DeliveryQueue } from './deliveries/delivery-queue';
import { SubscriptionReplicator } from './subscriptions/subscription-replicator';
import { SubscriptionsService } from './subscriptions/subscriptions.service';

@Controller()
export class WebhooksController {
  constructor(
    private readonly subscriptions: SubscriptionsService,
    private readonly queue: DeliveryQueue,
    private readonly deliveries: DeliveriesReader,
    private readonly replicator: SubscriptionReplicator,
  ) {}

  /** From peer countries: subscriptions changed there. */
  @EventPattern(WEBHOOKS_SUBSCRIPTIONS_CHANGED)
  async changed(@Payload() event: WebhookSubscriptionsChangedEvent): Promise<void> {
    await this.replicator.receive(event.subscriptions);
  }

  /** From peer countries: every subscription held here. */
  @MessagePattern(WEBHOOKS_SUBSCRIPTIONS_SNAPSHOT)
  snapshot(@Payload() request: WebhookSubscriptionsSnapshotRequest): Promise<WebhookSubscriptionsSnapshotReply> {
    return this.replicator.heldHere(request.after);
  }

  @MessagePattern(WEBHOOKS_ENQUEUE)
  async enqueue(@Payload() request: WebhooksEnqueueRequest): Promise<WebhooksEnqueueReply> {
    return { deliveries: await this.queue.enqueue(request.events) };
  }

  @MessagePattern(WEBHOOKS_CREATE)
  create(@Payload() request: WebhookCreateRequest) {
    return this.subscriptions.create(request);
  }

  @MessagePattern(WEBHOOKS_LIST)
  list(@Payload() request: WebhookListRequest) {
    return this.subscriptions.list(request.application_id, request.after);
  }

  @MessagePattern(WEBHOOKS_GET)
  get(@Payload() request: WebhookRefRequest) {
    return this.subscriptions.get(request);
  }

  @MessagePattern(WEBHOOKS_DELETE)
  async remove(@Payload() request: WebhookActionRequest) {
    await this.subscriptions.remove(request);
    return { deleted: true };
  }

  @MessagePattern(WEBHOOKS_ENABLE)
  enable(@Payload() request: WebhookActionRequest) {
    return this.subscriptions.enable(request);
  }

  @MessagePattern(WEBHOOKS_ROTATE_SECRET)
  rotateSecret(@Payload() request: WebhookActionRequest) {
    return this.subscriptions.rotateSecret(request);
  }

  @MessagePattern(WEBHOOKS_TEST)
  test(@Payload() request: WebhookRefRequest) {
    return this.queue.test(request);
  }

  @MessagePattern(WEBHOOKS_DELIVERIES)
  deliveriesOf(@Payload() request: WebhookDeliveriesRequest) {
    return this.deliveries.list(request);
  }

  @MessagePattern(WEBHOOKS_DELIVERY_GET)
  delivery(@Payload() request: WebhookDeliveryRequest) {
    return this.deliveries.get(request.application_id, request.delivery_id);
  }

  @MessagePattern(WEBHOOKS_DELIVERY_OWNER)
  owner(@Payload() request: WebhookDeliveryOwnerRequest) {
    return this.deliveries.owner(request.delivery_id);
  }

  @MessagePattern(WEBHOOKS_REPLAY)
  replay(@Payload() request: WebhookReplayRequest) {
    return this.queue.replay(request);
  }
}
