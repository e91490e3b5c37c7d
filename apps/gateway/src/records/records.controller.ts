import { Body, Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import {
  ConsentStatusReply,
  ConsentStatusRequest,
  CreateConsentRecordReply,
  CreateConsentRecordRequest,
  RECORDS_CONSENT_STATUS,
  RECORDS_CREATE,
} from '@dcr/contracts';
import { DomainError, recordRequestFingerprint } from '@dcr/domain';
import { ServiceClients } from '@dcr/service-kit';
import type { FastifyReply } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { AcceptCredentials, CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import { Principal, requireApplicationAccess } from '../auth/principal';
import { CredentialIndex } from '../connect/credential-index';
import { ApiErrorResponses } from '../openapi/openapi.decorators';
import { CreateConsentRecordDto } from './records.dto';

/**
 * The Record API: consent the organisation collected in its own form, recorded with the capture
 * rules, and a person's current status per purpose.
 */
@ApiTags('Consent records')
@ApiBearerAuth()
@ApiErrorResponses()
@AcceptCredentials('api_token')
@Controller()
export class RecordsController {
  constructor(
    private readonly clients: ServiceClients,
    private readonly index: CredentialIndex,
  ) {}

  @Post('api/v1/consent_records')
  @RequireScopes('records:write')
  @ApiOperation({
    summary: 'Record a consent captured in your own form',
    description:
      'Every purpose is checked against the active flow version: a consent purpose must be a decision that was neither ' +
      'ticked by default nor mandatory (an unticked box is a decline); a legitimate-interest purpose ticked is noticed, ' +
      'unticked an objection; notice-only purposes take no decision. Refusals are a 422 naming each purpose. A later ' +
      'record of the same person and flow supersedes the earlier one and withdraws what moved away from granted.',
  })
  @ApiCreatedResponse({ description: '`{consent_record: {record_id, status, flow_id, flow_version, subject, purposes, supersedes?}}`; 200 for an idempotent repeat' })
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateConsentRecordDto, @Res({ passthrough: true }) reply: FastifyReply) {
    if (principal.kind !== 'api_token') throw new DomainError('forbidden', 'Record consents with an API token of the application');
    const application = principal.application;
    const request: CreateConsentRecordRequest = {
      application_id: application.id,
      flow_id: body.flow_id,
      subject: body.subject,
      decisions: body.decisions,
      captured_at: body.captured_at,
      idempotency_key: body.idempotency_key,
      notice_digest: body.notice_digest,
      channel: 'controller_attested',
      // The body as JSON (the edge turned it into DTO instances), so a retry of the same JSON maps to the same record.
      request_fingerprint: recordRequestFingerprint(JSON.parse(JSON.stringify(body))),
    };
    const answer = await firstValueFrom(this.clients.own.send<CreateConsentRecordReply>(RECORDS_CREATE, request));
    void reply.status(answer.created ? 201 : 200);
    return { consent_record: answer.consent_record };
  }

  @Get('api/v1/applications/:application_id/consent_status')
  @RequireScopes('records:read')
  @ApiOperation({ summary: "A person's current status per purpose: granted, declined, withdrawn, objected or noticed" })
  @ApiQuery({ name: 'subject[external_id]', required: false })
  @ApiQuery({ name: 'subject[email]', required: false })
  @ApiQuery({ name: 'subject[id]', required: false })
  @ApiOkResponse({ description: '`{subject: {id}, purposes: {key: {status, record_id, updated_at}}}`' })
  status(@CurrentPrincipal() principal: Principal, @Param('application_id') applicationId: string, @Query() query: Record<string, unknown>) {
    requireApplicationAccess(principal, this.index.application(applicationId));
    const nested = (typeof query.subject === 'object' && query.subject !== null ? query.subject : {}) as Record<string, unknown>;
    const pick = (key: string) => {
      const value = query[`subject[${key}]`] ?? nested[key];
      if (value !== undefined && typeof value !== 'string') throw new DomainError('invalid_request', `subject[${key}] must be given once`, [{ field: `subject[${key}]`, reason: 'repeated' }]);
      return value as string | undefined;
    };
    const request: ConsentStatusRequest = { application_id: applicationId, external_id: pick('external_id'), email: pick('email'), subject_id: pick('id') };
    return firstValueFrom(this.clients.own.send<ConsentStatusReply>(RECORDS_CONSENT_STATUS, request));
  }
}
