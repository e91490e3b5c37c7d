import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  WEBHOOK_DELIVERY_ID,
  WEBHOOK_ID,
  WEBHOOKS_CREATE,
  WEBHOOKS_DELETE,
  WEBHOOKS_DELIVERIES,
  WEBHOOKS_DELIVERY_GET,
  WEBHOOKS_DELIVERY_OWNER,
  WEBHOOKS_ENABLE,
  WEBHOOKS_GET,
  WEBHOOKS_LIST,
  WEBHOOKS_REPLAY,
  WEBHOOKS_ROTATE_SECRET,
  WEBHOOKS_TEST,
  WebhookDeliveriesReply,
  WebhookDeliveryMessage,
  WebhookSubscriptionMessage,
  WebhookWithSecretMessage,
  ListPart,
} from '@dcr/contracts';
import { decodeCursor, DomainError, encodeCursor, notFound, Page, parseLimit } from '@dcr/domain';
import { everyPart, ServiceClients } from '@dcr/service-kit';
import { firstValueFrom } from 'rxjs';
import { AcceptCredentials, CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import { Principal, requireApplicationAccess } from '../auth/principal';
import { actorOfPrincipal } from '../connect/configuration-audit';
import { ListQueryDto } from '../connect/connect.dto';
import { CredentialIndex } from '../connect/credential-index';
import { pageOf } from '../http/paging';
import { ApiConflict, ApiErrorResponses, ApiPage } from '../openapi/openapi.decorators';
import { CreateWebhookDto, WebhookDeliveryDto, WebhookDto, WebhookWithSecretDto } from './webhooks.dto';

function webhookId(id: string): string {
  if (!WEBHOOK_ID.test(id)) throw notFound('Webhook');
  return id;
}

/** Webhook subscriptions of an application: where its events go, tests, and the delivery log. */
@ApiTags('Webhooks')
@ApiBearerAuth()
@ApiErrorResponses()
@AcceptCredentials('admin', 'api_token')
@Controller('api/v1/applications/:application_id/webhooks')
export class WebhooksController {
  constructor(
    private readonly clients: ServiceClients,
    private readonly index: CredentialIndex,
  ) {}

  private call<T>(pattern: string, body: object): Promise<T> {
    return firstValueFrom(this.clients.own.send<T>(pattern, body));
  }

  @Post()
  @RequireScopes('webhooks:write')
  @ApiOperation({
    summary: 'Subscribe a URL to event types; the signing secret is in this answer only',
    description: 'The subscription is in force in every country (each delivers the events that happen there) and can be managed at any country\'s endpoint; see docs/webhooks.md.',
  })
  @ApiCreatedResponse({ type: WebhookWithSecretDto })
  create(@CurrentPrincipal() principal: Principal, @Param('application_id') applicationId: string, @Body() body: CreateWebhookDto) {
    const application = requireApplicationAccess(principal, this.index.application(applicationId));
    return this.call<WebhookWithSecretMessage>(WEBHOOKS_CREATE, {
      application_id: application.id,
      environment: application.environment,
      url: body.url,
      events: body.events,
      actor: actorOfPrincipal(principal),
    });
  }

  @Get()
  @RequireScopes('webhooks:read')
  @ApiPage(WebhookDto)
  async list(@CurrentPrincipal() principal: Principal, @Param('application_id') applicationId: string, @Query() query: ListQueryDto): Promise<Page<WebhookSubscriptionMessage>> {
    requireApplicationAccess(principal, this.index.application(applicationId));
    const all = await everyPart((after) => this.call<ListPart<WebhookSubscriptionMessage>>(WEBHOOKS_LIST, { application_id: applicationId, ...(after ? { after } : {}) }));
    return pageOf(all, (item) => [item.created_at, item.id], query, `webhooks:${applicationId}`);
  }

  @Get(':id')
  @RequireScopes('webhooks:read')
  @ApiOkResponse({ type: WebhookDto })
  get(@CurrentPrincipal() principal: Principal, @Param('application_id') applicationId: string, @Param('id') id: string) {
    requireApplicationAccess(principal, this.index.application(applicationId));
    return this.call<WebhookSubscriptionMessage>(WEBHOOKS_GET, { application_id: applicationId, id: webhookId(id) });
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('webhooks:write')
  @ApiOperation({ summary: 'Delete a subscription; what is still queued for it is not sent' })
  @ApiNoContentResponse()
  async remove(@CurrentPrincipal() principal: Principal, @Param('application_id') applicationId: string, @Param('id') id: string): Promise<void> {
    requireApplicationAccess(principal, this.index.application(applicationId));
    await this.call(WEBHOOKS_DELETE, { application_id: applicationId, id: webhookId(id), actor: actorOfPrincipal(principal) });
  }

  @Post(':id/test')
  @HttpCode(202)
  @RequireScopes('webhooks:write')
  @ApiOperation({ summary: 'Send a signed webhook.test event through the delivery pipeline (never counts towards disabling)' })
  @ApiAcceptedResponse({ type: WebhookDeliveryDto })
  test(@CurrentPrincipal() principal: Principal, @Param('application_id') applicationId: string, @Param('id') id: string) {
    requireApplicationAccess(principal, this.index.application(applicationId));
    return this.call<WebhookDeliveryMessage>(WEBHOOKS_TEST, { application_id: applicationId, id: webhookId(id) });
  }

  @Post(':id/enable')
  @HttpCode(200)
  @RequireScopes('webhooks:write')
  @ApiOperation({ summary: 'Enable a subscription again (resets its consecutive-failure count)' })
  @ApiOkResponse({ type: WebhookDto })
  enable(@CurrentPrincipal() principal: Principal, @Param('application_id') applicationId: string, @Param('id') id: string) {
    requireApplicationAccess(principal, this.index.application(applicationId));
    return this.call<WebhookSubscriptionMessage>(WEBHOOKS_ENABLE, { application_id: applicationId, id: webhookId(id), actor: actorOfPrincipal(principal) });
  }

  @Post(':id/rotate_secret')
  @HttpCode(200)
  @RequireScopes('webhooks:write')
  @ApiOperation({ summary: 'Replace the signing secret; the new one is in this answer only and signs every delivery from now on' })
  @ApiOkResponse({ type: WebhookWithSecretDto })
  rotate(@CurrentPrincipal() principal: Principal, @Param('application_id') applicationId: string, @Param('id') id: string) {
    requireApplicationAccess(principal, this.index.application(applicationId));
    return this.call<WebhookWithSecretMessage>(WEBHOOKS_ROTATE_SECRET, { application_id: applicationId, id: webhookId(id), actor: actorOfPrincipal(principal) });
  }

  @Get(':id/deliveries')
  @RequireScopes('webhooks:read')
  @ApiOperation({
    summary: 'Deliveries of a subscription, newest first, with the request sent and every attempt',
    description: 'The deliveries this country sent (their bodies are about its people); each country lists its own.',
  })
  @ApiPage(WebhookDeliveryDto)
  async deliveries(
    @CurrentPrincipal() principal: Principal,
    @Param('application_id') applicationId: string,
    @Param('id') id: string,
    @Query() query: ListQueryDto,
  ): Promise<Page<WebhookDeliveryMessage>> {
    requireApplicationAccess(principal, this.index.application(applicationId));
    const cursor = decodeCursor<{ before?: unknown }>(query.cursor);
    if (cursor && !(typeof cursor.before === 'string' && WEBHOOK_DELIVERY_ID.test(cursor.before))) {
      throw new DomainError('invalid_request', 'The cursor does not belong to this list', [{ field: 'cursor', reason: 'unknown position' }]);
    }
    const page = await this.call<WebhookDeliveriesReply>(WEBHOOKS_DELIVERIES, {
      application_id: applicationId,
      subscription_id: webhookId(id),
      before: cursor?.before,
      limit: parseLimit(query.limit),
    });
    const last = page.deliveries[page.deliveries.length - 1];
    return { data: page.deliveries, next_cursor: page.has_more && last ? encodeCursor({ before: last.id }) : null };
  }
}

/** One delivery by id: inspect it, or send its event again. */
@ApiTags('Webhooks')
@ApiBearerAuth()
@ApiErrorResponses()
@AcceptCredentials('admin', 'api_token')
@Controller('api/v1/webhook_deliveries')
export class WebhookDeliveriesController {
  constructor(
    private readonly clients: ServiceClients,
    private readonly index: CredentialIndex,
  ) {}

  /** The delivery's application, if the caller may see it; otherwise the delivery does not exist for them. */
  private async applicationOf(principal: Principal, deliveryId: string): Promise<string> {
    if (!WEBHOOK_DELIVERY_ID.test(deliveryId)) throw notFound('Webhook delivery');
    const owner = await firstValueFrom(this.clients.own.send<{ application_id: string }>(WEBHOOKS_DELIVERY_OWNER, { delivery_id: deliveryId }));
    try {
      return requireApplicationAccess(principal, this.index.application(owner.application_id)).id;
    } catch {
      throw notFound('Webhook delivery');
    }
  }

  @Get(':delivery_id')
  @RequireScopes('webhooks:read')
  @ApiOkResponse({ type: WebhookDeliveryDto })
  async get(@CurrentPrincipal() principal: Principal, @Param('delivery_id') deliveryId: string) {
    const applicationId = await this.applicationOf(principal, deliveryId);
    return firstValueFrom(this.clients.own.send<WebhookDeliveryMessage>(WEBHOOKS_DELIVERY_GET, { application_id: applicationId, delivery_id: deliveryId }));
  }

  @Post(':delivery_id/replay')
  @HttpCode(202)
  @RequireScopes('webhooks:write')
  @ApiOperation({ summary: 'Send the delivery\'s event again: a new delivery with the same event id and body, signed afresh' })
  @ApiAcceptedResponse({ type: WebhookDeliveryDto })
  @ApiConflict('The subscription is disabled: enable it first (`details` on `subscription`)')
  async replay(@CurrentPrincipal() principal: Principal, @Param('delivery_id') deliveryId: string) {
    const applicationId = await this.applicationOf(principal, deliveryId);
    return firstValueFrom(
      this.clients.own.send<WebhookDeliveryMessage>(WEBHOOKS_REPLAY, { application_id: applicationId, delivery_id: deliveryId, actor: actorOfPrincipal(principal) }),
    );
  }
}
