import { Body, Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiBearerAuth, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import {
  CreateSubjectReply,
  CreateSubjectRequest,
  FindSubjectRequest,
  GetSubjectRequest,
  SubjectMessage,
  SUBJECTS_CREATE,
  SUBJECTS_FIND,
  SUBJECTS_GET,
} from '@dcr/contracts';
import { DomainError, isSubjectId, normaliseExternalId, notFound } from '@dcr/domain';
import { ServiceClients } from '@dcr/service-kit';
import type { FastifyReply } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import { Principal, requireApplicationAccess } from '../auth/principal';
import { CredentialIndex } from '../connect/credential-index';
import { ApiErrorResponses, ErrorBodyDto } from '../openapi/openapi.decorators';
import { ResidencyLookup } from './residency-lookup';
import { CreateSubjectDto, FindSubjectQueryDto, SubjectDto } from './subjects.dto';

const WRONG_COUNTRY = {
  status: 421,
  description: 'The person is homed in another country: `code: wrong_country` and `home_country`, nothing else',
  type: ErrorBodyDto,
};

/**
 * The people an application asks for decisions. Their data stays in their home country (the
 * country whose endpoint first recorded them); every other country answers 421 with the home.
 */
@ApiTags('Subjects (residency)')
@ApiBearerAuth()
@ApiErrorResponses()
@Controller('api/v1/applications/:application_id/subjects')
export class SubjectsController {
  constructor(
    private readonly clients: ServiceClients,
    private readonly index: CredentialIndex,
    private readonly residency: ResidencyLookup,
  ) {}

  @Post()
  @RequireScopes('decisions:write')
  @ApiOperation({
    summary: 'Record a person in this country (201), or return the one already recorded here (200)',
    description:
      'With both `email` and `external_id`, both must name the same person, or a new one: an external id that belongs to another person, or to a person recorded with another address, ' +
      'or one given for a person whose address is recorded with another external id, is a 422 on `external_id`, as the Record API refuses it (nothing is dropped silently). ' +
      'A person recorded by one of them alone is given the other, as the Record API gives it: afterwards either names them (lookups, `consent_status`), here and, through the residency directory, ' +
      'in every country (421 elsewhere). An identifier the directory homes in another country names another person there and is not given (422 on `external_id` or `email`, ' +
      '"belongs to another person of this application"). Of two requests giving the same person different identifiers at the same moment, one is kept and the other refused (422), leaving nothing behind.',
  })
  @ApiCreatedResponse({ type: SubjectDto, description: 'Recorded here' })
  @ApiOkResponse({ type: SubjectDto, description: 'Already recorded here: the same person (with the identifier given for them, if they lacked it)' })
  @ApiResponse({ ...WRONG_COUNTRY, description: `${WRONG_COUNTRY.description}; given both identifiers, one homed here and the other elsewhere is a 422 instead (two people)` })
  async create(
    @CurrentPrincipal() principal: Principal,
    @Param('application_id') applicationId: string,
    @Body() body: CreateSubjectDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SubjectMessage> {
    requireApplicationAccess(principal, this.index.application(applicationId));
    if (!body.email && !body.external_id) {
      throw new DomainError('validation_failed', 'Give email or external_id', [
        { field: 'external_id', reason: 'email or external_id is required' },
      ]);
    }
    // Kept without the spaces around it (the Record API's rule), so it is looked up as it is kept.
    const externalId = body.external_id === undefined ? undefined : normaliseExternalId(body.external_id);
    await this.residency.requireNamedHere(applicationId, { external_id: externalId || undefined, email: body.email || undefined });
    const { subject, created } = await firstValueFrom(
      this.clients.own.send<CreateSubjectReply, CreateSubjectRequest>(SUBJECTS_CREATE, {
        application_id: applicationId,
        email: body.email,
        external_id: externalId,
      }),
    );
    reply.status(created ? 201 : 200);
    return subject;
  }

  @Get()
  @RequireScopes('decisions:read')
  @ApiOperation({ summary: 'Find a person by external_id or email' })
  @ApiOkResponse({ type: SubjectDto })
  @ApiResponse(WRONG_COUNTRY)
  async find(
    @CurrentPrincipal() principal: Principal,
    @Param('application_id') applicationId: string,
    @Query() query: FindSubjectQueryDto,
  ): Promise<SubjectMessage> {
    requireApplicationAccess(principal, this.index.application(applicationId));
    const address = query.external_id ? { external_id: normaliseExternalId(query.external_id) } : query.email ? { email: query.email } : undefined;
    if (!address) {
      throw new DomainError('invalid_request', 'Give external_id or email', [
        { field: 'external_id', reason: 'external_id or email is required' },
      ]);
    }
    if ((await this.residency.requireHomedHere(applicationId, address)) === 'unknown') throw notFound('Subject');
    return firstValueFrom(
      this.clients.own.send<SubjectMessage, FindSubjectRequest>(SUBJECTS_FIND, { application_id: applicationId, ...address }),
    );
  }

  @Get(':subject_id')
  @RequireScopes('decisions:read')
  @ApiOperation({
    summary: 'A person by id',
    description:
      'The id starts with its home country (`sub_de…`; treat it as opaque): an id naming another country of the deployment is answered 421 with that country, which then answers for it (404 when no such person exists).',
  })
  @ApiOkResponse({ type: SubjectDto })
  @ApiResponse(WRONG_COUNTRY)
  async get(
    @CurrentPrincipal() principal: Principal,
    @Param('application_id') applicationId: string,
    @Param('subject_id') subjectId: string,
  ): Promise<SubjectMessage> {
    requireApplicationAccess(principal, this.index.application(applicationId));
    if (!isSubjectId(subjectId)) throw notFound('Subject');
    if ((await this.residency.requireHomedHere(applicationId, { subject_id: subjectId })) === 'unknown') {
      throw notFound('Subject');
    }
    return firstValueFrom(
      this.clients.own.send<SubjectMessage, GetSubjectRequest>(SUBJECTS_GET, { application_id: applicationId, subject_id: subjectId }),
    );
  }
}
