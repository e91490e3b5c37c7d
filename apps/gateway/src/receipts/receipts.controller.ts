import { Controller, Get, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProduces, ApiPropertyOptional, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { GatewayEnvironment } from '@dcr/config';
import {
  DECISIONS_RESOURCE_OWNER,
  RECEIPT_FLAVORS,
  RECEIPTS_EXPORT,
  RECEIPTS_KEYS,
  ReceiptExportReply,
  ReceiptFlavor,
  ReceiptKeysReply,
  ResourceOwnerReply,
  ResourceOwnerRequest,
} from '@dcr/contracts';
import { countryOfRecordId, DomainError, notFound } from '@dcr/domain';
import { RECEIPT_SCHEMA_PATH, receiptSchemaBytes } from '@dcr/receipts';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { setTimeout as delay } from 'node:timers/promises';
import { firstValueFrom } from 'rxjs';
import { AcceptCredentials, CurrentPrincipal, PublicRoute, RequireAnyScope } from '../auth/auth.decorators';
import { Principal, requireApplicationAccess } from '../auth/principal';
import { CredentialIndex } from '../connect/credential-index';
import { publicBaseUrl } from '../http/public-url';
import { ApiErrorResponses, ApiNotImplemented, ApiWrongCountry, ErrorBodyDto } from '../openapi/openapi.decorators';
import { audienceOf, HomeCountry } from '../residency/home-country';

/** A receipt's one parameter: any other (a misspelt `flavour`) or a repeated one is a 400 naming it, not the canonical receipt. */
export class ReceiptQueryDto {
  @ApiPropertyOptional({ enum: RECEIPT_FLAVORS, default: 'canonical' })
  @IsOptional()
  @IsIn(RECEIPT_FLAVORS, { message: `flavor must be one of ${RECEIPT_FLAVORS.join(', ')}` })
  flavor?: ReceiptFlavor;
}

/**
 * Consent receipts (ISO/IEC TS 27560, `service-cr/2.13`) of this country's records, in three
 * flavors. A record id names its home country: a record kept elsewhere is answered with
 * `wrong_country` and that country only.
 */
@ApiTags('Receipts')
@ApiBearerAuth()
@ApiErrorResponses()
@AcceptCredentials('admin', 'api_token')
@Controller('api/v1/consent_receipts')
export class ConsentReceiptsController {
  constructor(
    private readonly homeCountry: HomeCountry,
    private readonly clients: ServiceClients,
    private readonly index: CredentialIndex,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  @Get(':record_id')
  @RequireAnyScope('records:read', 'decisions:read')
  @ApiOperation({
    summary: 'A consent receipt: canonical (RFC 8785 JSON), dpv (JSON-LD, inline context) or signed (detached JWS over the canonical bytes)',
    description: 'Verify a signed receipt offline with `npx dcr-receipt-verify` and /.well-known/jwks.json (or the key history in /.well-known/witness-configuration).',
  })
  @ApiProduces('application/json', 'application/ld+json')
  @ApiOkResponse({ description: 'The receipt in the flavor asked for' })
  @ApiWrongCountry('The record')
  @ApiResponse({
    status: 503,
    description:
      "The record is written but its receipt is not frozen yet (it is frozen from the record's event a moment after the 201; the read waits about 2.5 s for it first): `service_unavailable` with Retry-After",
    schema: { $ref: getSchemaPath(ErrorBodyDto) },
  })
  async get(
    @CurrentPrincipal() principal: Principal,
    @Param('record_id') recordId: string,
    @Query() query: ReceiptQueryDto,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const chosen = query.flavor ?? 'canonical';
    const home = countryOfRecordId(recordId);
    if (!home) throw notFound('Receipt');
    await this.homeCountry.requireHere(home, 'record', recordId, 'Receipt', audienceOf(principal));
    const exported = (await this.exported(recordId, chosen)) ?? (await this.frozenSoon(principal, recordId, chosen));
    this.requireVisible(principal, exported.application_id);
    void reply.status(200).type(`${exported.content_type}; charset=utf-8`).header('cache-control', 'private, no-store').send(exported.body);
  }

  /** The receipt, or null while there is none (never frozen, or not yet). */
  private async exported(recordId: string, flavor: ReceiptFlavor): Promise<ReceiptExportReply | null> {
    try {
      return await firstValueFrom(this.clients.own.send<ReceiptExportReply>(RECEIPTS_EXPORT, { record_id: recordId, flavor }));
    } catch (error) {
      if (error instanceof DomainError && error.code === 'not_found') return null;
      throw error;
    }
  }

  /**
   * A receipt is frozen by the receipts service from the record's event, a moment after the record
   * is written (the outbox relay carries it), so a caller that reads it straight after the 201 can
   * come before it. For a consent record of this country that the caller may see, the receipt is
   * waited for (RECEIPT_WAITS: about 2.5 s in all); still missing then (the receipts service behind
   * or down), it is a 503 with `Retry-After`. Anything else, or another organisation's record, is
   * the 404 of a receipt that does not exist, at once.
   */
  private async frozenSoon(principal: Principal, recordId: string, flavor: ReceiptFlavor): Promise<ReceiptExportReply> {
    const owner = await firstValueFrom(this.clients.own.send<ResourceOwnerReply, ResourceOwnerRequest>(DECISIONS_RESOURCE_OWNER, { kind: 'consent_record', id: recordId }));
    if (!owner.application_id) throw notFound('Receipt');
    this.requireVisible(principal, owner.application_id);
    for (const waitMs of RECEIPT_WAITS) {
      await delay(waitMs);
      const exported = await this.exported(recordId, flavor);
      if (exported) return exported;
    }
    throw new DomainError('service_unavailable', `The receipt of ${recordId} is not frozen yet; the record is kept, try again shortly`, undefined, { retry_after: 1 });
  }

  /** A receipt of another organisation is answered as one that does not exist. */
  private requireVisible(principal: Principal, applicationId: string): void {
    try {
      requireApplicationAccess(principal, this.index.application(applicationId));
    } catch {
      throw notFound('Receipt');
    }
  }
}

/** The pauses before each new look for a receipt on its way (ms; 2.55 s in all). */
const RECEIPT_WAITS = [10, 20, 40, 80, 160, 320, 640, 1280];

/**
 * Authorization receipts (agent grants) and disclosure receipts arrive with the OIDC/agent work;
 * until then their routes answer 501 so a client learns that, not a 404.
 */
@ApiTags('Receipts')
@ApiBearerAuth()
@ApiErrorResponses()
@AcceptCredentials('admin', 'api_token')
@Controller('api/v1')
export class PendingReceiptsController {
  @Get('authorization_receipts/:id')
  @ApiOperation({ summary: 'Not implemented yet (501): authorization receipts come with AI-agent authority grants' })
  @ApiNotImplemented('Authorization receipts are not built yet')
  authorization(): never {
    throw new DomainError('not_implemented', 'Authorization receipts are not implemented yet; they come with AI-agent authority grants');
  }

  @Post('disclosure_receipts')
  @ApiOperation({ summary: 'Not implemented yet (501): declared agent disclosures come with the MCP gateway' })
  @ApiNotImplemented('Disclosure receipts are not built yet')
  disclosure(): never {
    throw new DomainError('not_implemented', 'Disclosure receipts are not implemented yet; they come with the MCP gateway');
  }
}

/** Discovery for receipts: the schema byte-for-byte, the signing keys, and each controller's transparency record. */
@ApiTags('Receipts')
@PublicRoute()
@Controller()
export class ReceiptDiscoveryController {
  private readonly schema = receiptSchemaBytes();

  constructor(
    private readonly clients: ServiceClients,
    private readonly index: CredentialIndex,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  @Get(RECEIPT_SCHEMA_PATH.slice(1))
  @ApiOperation({ summary: 'The receipt JSON Schema (Draft 2020-12), byte-for-byte' })
  schemaFile(@Res() reply: FastifyReply): void {
    void reply
      .status(200)
      .header('access-control-allow-origin', '*')
      .header('cache-control', 'public, max-age=86400')
      .type('application/schema+json')
      .send(this.schema);
  }

  @Get('.well-known/jwks.json')
  @ApiOperation({ summary: 'The current receipt signing keys (JWK Set)' })
  async jwks(@Res() reply: FastifyReply): Promise<void> {
    const keys = await firstValueFrom(this.clients.own.send<ReceiptKeysReply>(RECEIPTS_KEYS, {}));
    void reply.status(200).header('cache-control', 'public, max-age=300').type('application/jwk-set+json').send(keys.jwks);
  }

  @Get('.well-known/transparency/:application_id')
  @ApiOperation({ summary: 'The controller identification record: declared parties, export flavors, schema and key discovery' })
  transparency(@Param('application_id') applicationId: string, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const application = this.index.application(applicationId);
    if (!application) throw notFound('Application');
    const base = publicBaseUrl(this.context.env as GatewayEnvironment, request);
    void reply.header('cache-control', 'public, max-age=300');
    return {
      application_id: application.id,
      country: this.context.env.COUNTRY,
      parties: [
        { party_id: application.id, party_name: application.name, party_role: 'controller', provenance: 'display_name' },
        { party_id: 'dcr-platform', party_name: 'Decision, Consent and Receipt Service', party_role: 'processor' },
      ],
      receipts: {
        schema_version: 'service-cr/2.13',
        schema: `${base}${RECEIPT_SCHEMA_PATH}`,
        export_flavors: RECEIPT_FLAVORS,
        endpoint: `${base}/api/v1/consent_receipts/{record_id}`,
      },
      keys: { jwks_uri: `${base}/.well-known/jwks.json`, witness_configuration: `${base}/.well-known/witness-configuration` },
    };
  }
}
