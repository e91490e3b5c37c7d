import { applyDecorators, Body, Controller, Get, Inject, Logger, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiExtraModels, ApiOkResponse, ApiOperation, ApiQuery, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import {
  ImportChunkReply,
  ImportGetRequest,
  ImportReport,
  ImportReportPage as ImportReportPageMessage,
  ImportRowInput,
  ImportRowOutcome,
  RECORDS_IMPORT,
  RECORDS_IMPORT_FAILED,
  RECORDS_IMPORT_GET,
  RECORDS_IMPORT_LIST,
  ImportListItem,
  ImportListReply,
  ImportListRequest,
  ConsentStatusReply,
  ConsentStatusRequest,
  CreateConsentRecordReply,
  CreateConsentRecordRequest,
  RECORDS_CONSENT_STATUS,
  RECORDS_CREATE,
  IMPORT_REPORT_MESSAGE_ROWS,
} from '@dcr/contracts';
import { countryOfImportId, decodeCursor, DomainError, encodeCursor, Page, emailProblem, externalIdProblem, importDecisionOrder, importReportCursor, importReportPosition, isImportId, isSubjectId, newImportId, notFound, parseLimit, recordRequestFingerprint, SUBJECT_ID_LENGTH } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import type { FastifyReply } from 'fastify';
import { isEmailAddress } from '../residency/subject-fields';
import { firstValueFrom } from 'rxjs';
import { AcceptCredentials, CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import { Principal, requireApplicationAccess } from '../auth/principal';
import { CredentialIndex } from '../connect/credential-index';
import { ApiConflict, ApiErrorResponses, ApiPage, ApiWrongCountry, ErrorBodyDto } from '../openapi/openapi.decorators';
import { ResidencyLookup, SubjectAddress } from '../residency/residency-lookup';
import { DryRunLedgerOfRun } from './dry-run-ledger';
import { TransportRecord } from '@dcr/transport';
import { importChunkEnd, importRowDecisionCounts, importRowSizes, MAX_IMPORT_ROW_DECISIONS, overfullImportRows, oversizedImportRows } from './import-chunks';
import {
  AttestedDecisionDto,
  ConsentRecordEnvelopeDto,
  ConsentStatusDto,
  CreateConsentRecordDto,
  ImportConsentRecordsDto,
  ImportedDecisionDto,
  ImportListItemDto,
  ImportListQueryDto,
  ImportReportDto,
  ImportReportPageDto,
  ImportStoppedErrorDto,
  importRowsNotObjects,
  PurposeStatusDto,
  RecordedPurposeDto,
} from './records.dto';
import { audienceOf, HomeCountry } from '../residency/home-country';
import { AccountApplications } from '../auth/account-applications';
import { ListQueryDto } from '../connect/connect.dto';
import { GIVEN_ONCE, repeatedQueryParameter } from '../http/query-parameters';

/** A page of an import's report as answered: the report with this page's rows, and the cursor of the next page. */
type ImportReportPage = ImportReport & { next_cursor: string | null };

/**
 * How long the gateway waits for a chunk: a chunk keeps being written after its caller stops
 * waiting, so giving up early (the 5 s of other requests) on a busy database would report a chunk as
 * failed that is recorded after all. A minute is far beyond a chunk's time (a few hundred ms).
 */
const IMPORT_CHUNK_TIMEOUT_MS = 60_000;

/**
 * The errors a real import answers when a chunk fails after earlier ones were recorded: the chunk's
 * error (a database that did not answer, 503; one that took too long, 504; an unexpected one, 500;
 * a refusal of the flow, 422) with `import_id` and `rows_decided` (ImportStoppedErrorDto).
 */
const ApiImportStopped = () =>
  applyDecorators(
    ApiExtraModels(ImportStoppedErrorDto),
    ...[
      [422, 'Validation failed; details name the fields (a later chunk refused: also `import_id` and `rows_decided`)'],
      [500, 'Server error (a later chunk: also `import_id` and `rows_decided`)'],
      [503, "A new person could not be agreed with a peer country; a later chunk's 503, whatever its cause, also carries `import_id` and `rows_decided`"],
      [504, 'A service took too long (a later chunk: also `import_id` and `rows_decided`)'],
    ].map(([status, description]) => ApiResponse({ status: status as number, description: description as string, schema: { $ref: getSchemaPath(ImportStoppedErrorDto) } })),
  );

const SUBJECT_PARAMETERS = { external_id: 'subject[external_id]', email: 'subject[email]', id: 'subject[id]' } as const;

/**
 * The person a consent_status request names (`subject[external_id]`, `subject[email]` or
 * `subject[id]`, flat as Fastify's query parser hands them over, or in a nested `subject` object):
 * exactly one, once, well-formed, or 400 `invalid_request` naming the parameter. Any other parameter
 * is refused before the route runs, as on every /api/v1 route (query-parameters.ts), from the route's
 * `@ApiQuery()` declarations.
 */
export function consentStatusAddress(query: Record<string, unknown>): SubjectAddress {
  const nested = (typeof query.subject === 'object' && query.subject !== null ? query.subject : {}) as Record<string, unknown>;
  // Any other parameter was refused before (the route's @ApiQuery() names are all it takes: query-parameters.ts).
  const given: Array<[keyof typeof SUBJECT_PARAMETERS, string]> = [];
  for (const key of Object.keys(SUBJECT_PARAMETERS) as Array<keyof typeof SUBJECT_PARAMETERS>) {
    const name = SUBJECT_PARAMETERS[key];
    const value = query[name] ?? nested[key];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw new DomainError('invalid_request', `${name} ${GIVEN_ONCE}`, [repeatedQueryParameter(name)]);
    given.push([key, value]);
  }
  const names = Object.values(SUBJECT_PARAMETERS).join(', ');
  if (given.length !== 1) {
    const required = `exactly one of ${names} is required`;
    // None: the subject is missing; several: each parameter named by itself (a field is one path).
    const details =
      given.length === 0
        ? [{ field: 'subject', reason: required }]
        : given.map(([key]) => {
            const others = given.filter(([other]) => other !== key).map(([other]) => SUBJECT_PARAMETERS[other]);
            return { field: SUBJECT_PARAMETERS[key], reason: `${required}; ${others.join(' and ')} ${others.length > 1 ? 'are' : 'is'} given too` };
          });
    throw new DomainError('invalid_request', `Name the person by exactly one of ${names}`, details);
  }
  const [[key, value]] = given;
  const name = SUBJECT_PARAMETERS[key];
  const invalid = (reason: string) => new DomainError('invalid_request', `${name} ${reason}`, [{ field: name, reason }]);
  if (key === 'email') {
    // By the rule a record takes it by (emailProblem), so a refusal names the limit an address is over.
    const problem = emailProblem(value, isEmailAddress);
    if (problem) throw invalid(problem);
    return { email: value };
  }
  if (key === 'id') {
    if (!isSubjectId(value)) throw invalid('must be a person id (sub_…)');
    return { subject_id: value };
  }
  // By the rule a record takes it by (externalIdProblem), so every recorded id can be asked for.
  const problem = externalIdProblem(value);
  if (problem) throw invalid(problem);
  return { external_id: value };
}

/**
 * The Record API: consent the organisation collected in its own form, recorded with the capture
 * rules, and a person's current status per purpose.
 */
@ApiTags('Consent records')
@ApiExtraModels(AttestedDecisionDto, RecordedPurposeDto, PurposeStatusDto, ImportedDecisionDto)
@ApiBearerAuth()
@ApiErrorResponses()
@AcceptCredentials('api_token')
@Controller()
export class RecordsController {
  private readonly logger = new Logger(RecordsController.name);

  constructor(
    private readonly homeCountry: HomeCountry,
    private readonly clients: ServiceClients,
    private readonly index: CredentialIndex,
    private readonly residency: ResidencyLookup,
    private readonly accounts: AccountApplications,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  @Post('api/v1/consent_records')
  @RequireScopes('records:write')
  @ApiOperation({
    summary: 'Record a consent captured in your own form',
    description:
      'Every purpose is checked against the flow version in force at `captured_at`: the newest version activated at or before it ' +
      '(the flow\'s first version for a capture before every activation: history from before the service), or the activated ' +
      'version `flow_version` pins (422 naming `flow_version` for a draft or unknown one, naming `captured_at` for a capture before its ' +
      'activation, except for the first version). A version activated later supersedes it for later captures only; the record, its ' +
      'receipt (notice, wording, term) and consent_status keep the version it was decided against. A consent purpose must be a decision that was neither ' +
      'ticked by default nor mandatory (an unticked box is a decline); a legitimate-interest purpose ticked is noticed, ' +
      'unticked an objection; notice-only purposes take no decision. Refusals are a 422 naming each purpose. A later ' +
      'record of the same person and flow supersedes the earlier one and withdraws what moved away from granted; it also takes that ' +
      'back from a consent the person gave on the hosted pages before it (`consent.purpose_revoked`/`consent.revoked` on that consent\'s record). ' +
      'A version activated while the request was being handled (by another replica, or in the flow\'s home country) is the ' +
      'one it gets when it was activated by `captured_at`. The record is the flow\'s application\'s, which may be any application of the API token\'s account.',
  })
  @ApiCreatedResponse({ type: ConsentRecordEnvelopeDto, description: 'The record' })
  @ApiOkResponse({ type: ConsentRecordEnvelopeDto, description: 'An idempotent repeat (the same idempotency_key and body): the earlier record' })
  @ApiConflict('The idempotency_key was used with a different body (`idempotency_conflict`)')
  @ApiWrongCountry('The person')
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateConsentRecordDto, @Res({ passthrough: true }) reply: FastifyReply) {
    if (principal.kind !== 'api_token') throw new DomainError('forbidden', 'Record consents with an API token of the application');
    const request: CreateConsentRecordRequest = {
      // The flow's application, when it is one of the token's account (AccountApplications).
      application_id: await this.accounts.applicationFor(principal, 'flow', body.flow_id),
      flow_id: body.flow_id,
      subject: body.subject,
      decisions: body.decisions,
      captured_at: body.captured_at,
      idempotency_key: body.idempotency_key,
      notice_digest: body.notice_digest,
      ...(body.flow_version !== undefined ? { flow_version: body.flow_version } : {}),
      version_rule: 'in_force_at_capture',
      channel: 'controller_attested',
      // With a key, the body as JSON (the edge turned it into DTO instances), so a retry of the same
      // JSON maps to the same record; without one nothing compares it.
      ...(body.idempotency_key ? { request_fingerprint: recordRequestFingerprint(JSON.parse(JSON.stringify(body))) } : {}),
    };
    const answer = await firstValueFrom(this.clients.own.send<CreateConsentRecordReply>(RECORDS_CREATE, request));
    void reply.status(answer.created ? 201 : 200);
    return { consent_record: answer.consent_record };
  }

  @Post('api/v1/consent_records/imports')
  @RequireScopes('records:write')
  @ApiOperation({
    summary: 'Import historical consent records (dry run first)',
    description:
      'Every row goes through the capture rules and is recorded with channel `imported`, its original `captured_at` and ' +
      'the service\'s `recorded_at`, against the flow version in force at its `captured_at`, as a record is (the newest activated at or before it; ' +
      'the first version for a time before every activation; a version activated after the import began is not used); each row\'s outcome names it (`flow_version`). A dry run writes nothing and reports per row what would be recorded or refused (by ' +
      'name), as the real import would answer: idempotency keys, people and their identifiers, residency, also across the ' +
      'rows of the whole request. Rows are decided in the order they were captured (`captured_at`; equal times in row order), as if sent one by one in that order, so a ' +
      'person\'s history is linked as it was made whatever order the rows list it in; the report lists them by `index`. A real import answers 201 with the report, which `GET /api/v1/consent_records/imports/<import_id>` shows again, whole or a page of rows at a time (`limit`, `cursor`). ' +
      'It is recorded in chunks (at most 500 rows, fewer for rows or flows so large that a chunk or its answer would not fit the service bus), each in its own transaction: when a chunk fails after earlier ones were recorded, the answer is that error plus ' +
      '`import_id` and `rows_decided` (how many rows were decided; the report lists which), and the report has `status: failed` with `failure: {offset, code, message}`. ' +
      'Bodies up to 16 MiB; a row over 64 KiB of JSON, or with more than 100 decisions, is refused by its index (422 naming `records[<i>]` or `records[<i>].decisions`) before anything is written. ' +
      'The import and its records are the flow\'s application\'s, which may be any application of the API token\'s account; any token of the account reads its report.',
  })
  @ApiCreatedResponse({ type: ImportReportDto, description: 'A real import: its report, `{import_id, flow_id, dry_run, status, summary: {recorded, refused}, rows: [{index, outcome, record_id?, reasons?}], created_at}`' })
  @ApiOkResponse({ type: ImportReportDto, description: 'A dry run: the same report, nothing written (and not kept)' })
  @ApiImportStopped()
  async import(@CurrentPrincipal() principal: Principal, @Body() body: ImportConsentRecordsDto, @Res({ passthrough: true }) reply: FastifyReply): Promise<ImportReport> {
    if (principal.kind !== 'api_token') throw new DomainError('forbidden', 'Import consent records with an API token of the application');
    // The flow's application, when it is one of the token's account (AccountApplications).
    const applicationId = await this.accounts.applicationFor(principal, 'flow', body.flow_id);
    const notRows = importRowsNotObjects(body.records);
    if (notRows.length > 0) throw new DomainError('validation_failed', 'The request did not pass validation', notRows);
    const sizes = importRowSizes(body.records);
    const decisionCounts = importRowDecisionCounts(body.records);
    const oversized = [...oversizedImportRows(sizes), ...overfullImportRows(decisionCounts)];
    if (oversized.length > 0) throw new DomainError('validation_failed', 'The request did not pass validation', oversized);
    // The id names the country that keeps the report, so another country answers 421 for it.
    const importId = newImportId(this.context.env.COUNTRY);
    // Decided in the order they were captured, so a person's history is linked as it was made
    // whatever order the export lists it in; the chunks carry each row's index.
    const order = importDecisionOrder(body.records);
    const inOrder = { sizes: order.map((i) => sizes[i]), decisionCounts: order.map((i) => decisionCounts[i]) };
    const rows: ImportRowOutcome[] = [];
    // A dry run's later chunks are told what its earlier ones would have written (a real import's find it written).
    const ledger = body.dry_run ? new DryRunLedgerOfRun() : undefined;
    // The version active when the first chunk was decided: every row is decided against the version
    // in force at its captured_at among it and the ones before it, also when another is activated meanwhile.
    let flowVersion: number | undefined;
    // The purposes of the flow, which bound a chunk's reply: the most a flow can have until the first chunk says.
    let purposes: number = MAX_IMPORT_ROW_DECISIONS;
    // A real import's report was made with its first chunk: the answer says that time, as the report does.
    let createdAt: string | undefined;
    for (let offset = 0, end = 0; offset < body.records.length; offset = end) {
      end = importChunkEnd(inOrder.sizes, inOrder.decisionCounts, offset, purposes);
      const indexes = order.slice(offset, end);
      const records = indexes.map((i) => body.records[i]) as unknown as ImportRowInput[];
      const earlier = ledger?.meets(records);
      let chunk: ImportChunkReply;
      try {
        chunk = await firstValueFrom(
          this.clients.own.send<ImportChunkReply>(RECORDS_IMPORT, new TransportRecord({
            application_id: applicationId,
            import_id: importId,
            offset,
            flow_id: body.flow_id,
            dry_run: body.dry_run,
            send_receipts: body.send_receipts ?? false,
            last: end >= body.records.length,
            ...(flowVersion !== undefined ? { flow_version: flowVersion } : {}),
            records,
            indexes,
            ...(earlier ? { earlier } : {}),
          }, { timeoutMs: IMPORT_CHUNK_TIMEOUT_MS })),
        );
      } catch (error) {
        throw await this.importStopped(applicationId, importId, offset, body.dry_run, error);
      }
      // A chunk decides its rows one flow version at a time: the rows after those it decided go in the next one.
      if (chunk.decided !== undefined && chunk.decided >= 1 && chunk.decided < end - offset) end = offset + chunk.decided;
      ledger?.add(chunk.ledger);
      flowVersion ??= chunk.flow_version;
      createdAt ??= chunk.created_at;
      purposes = chunk.purposes ?? purposes;
      rows.push(...chunk.rows);
    }
    void reply.status(body.dry_run ? 200 : 201);
    rows.sort((a, b) => a.index - b.index);
    const recorded = rows.filter((row) => row.outcome === 'recorded').length;
    return {
      import_id: importId,
      flow_id: body.flow_id,
      dry_run: body.dry_run,
      status: 'completed',
      summary: { recorded, refused: rows.length - recorded },
      rows,
      created_at: createdAt ?? new Date().toISOString(),
    };
  }

  /**
   * A chunk of a real import failed after earlier chunks were recorded: those rows stay recorded (each
   * chunk is its own transaction), so the report is marked `failed` with where and why, and the error
   * answered names the import (`import_id`) and how many rows were decided before it
   * (`rows_decided`; rows are decided in captured_at order, so the report says which), so the caller
   * can read the report and send the others. A failure of the first
   * chunk, or of a dry run, recorded nothing: its error is answered as it is.
   */
  private async importStopped(applicationId: string, importId: string, offset: number, dryRun: boolean, error: unknown): Promise<unknown> {
    if (dryRun || offset === 0) return error;
    if (!(error instanceof DomainError)) this.logger.error(`import ${importId} stopped after ${offset} rows: ${(error as Error)?.stack ?? String(error)}`);
    const cause = error instanceof DomainError ? error : new DomainError('internal_error', 'The import stopped on an unexpected error');
    const failure = { offset, code: cause.code, message: cause.message };
    // Best effort: if the report cannot be marked, it stays `in_progress`, which says no more than is known.
    await firstValueFrom(this.clients.own.send(RECORDS_IMPORT_FAILED, { application_id: applicationId, import_id: importId, failure })).catch(() => undefined);
    return new DomainError(
      cause.code,
      `${cause.message}. The import stopped after ${offset} rows (decided in the order they were captured); the rows its report lists were decided and stay recorded (GET /api/v1/consent_records/imports/${importId}); send the others again`,
      cause.details,
      { ...cause.extra, import_id: importId, rows_decided: offset },
    );
  }

  @Get('api/v1/consent_records/imports')
  @RequireScopes('records:read')
  @ApiOperation({
    summary: "An application's imports kept in this country, newest first (dry runs are not kept)",
    description:
      'Each import by its report\'s head: `import_id`, `flow_id`, `status`, `failure?`, `summary` and how many rows its report holds (`rows_reported`); ' +
      'read its rows with GET …/imports/<import_id>. For finding an import whose answer was lost (a client that stopped waiting: the import goes on). ' +
      "The token's own application's by default, or `application_id` of its account (another is 404). At most `limit` (50 by default, 1 to 200) a page, then `next_cursor`; " +
      'each country lists the imports it keeps (an import id names its country).',
  })
  @ApiPage(ImportListItemDto)
  async importList(@CurrentPrincipal() principal: Principal, @Query() query: ImportListQueryDto): Promise<Page<ImportListItem>> {
    if (principal.kind !== 'api_token') throw new DomainError('forbidden', 'List imports with an API token of the application');
    const application = query.application_id === undefined ? principal.application : requireApplicationAccess(principal, this.index.application(query.application_id));
    const list = `imports:${application.id}`;
    const cursor = decodeCursor<{ list?: unknown; after?: unknown }>(query.cursor);
    const after = cursor?.after;
    if (cursor && (cursor.list !== list || !Array.isArray(after) || after.length !== 2 || !after.every((part) => typeof part === 'string'))) {
      throw new DomainError('invalid_request', 'The cursor does not belong to this list', [{ field: 'cursor', reason: 'a cursor of another list' }]);
    }
    const page = await firstValueFrom(
      this.clients.own.send<ImportListReply, ImportListRequest>(RECORDS_IMPORT_LIST, {
        application_id: application.id,
        limit: parseLimit(query.limit),
        ...(after ? { after: after as [string, string] } : {}),
      }),
    );
    return { data: page.data, next_cursor: page.next ? encodeCursor({ list, after: page.next }) : null };
  }

  @Get('api/v1/consent_records/imports/:import_id')
  @RequireScopes('records:read')
  @ApiOperation({
    summary: 'The report of an import, whole or its rows a page at a time (dry runs are not kept)',
    description:
      '`status`: `completed`, `in_progress` (its chunks are being recorded, or it stopped without word), or `failed` with `failure: {offset, code, message}`. ' +
      'Without `limit` and `cursor` the whole report, every row by `index` (`next_cursor: null`), as the import answered it. With either, a page: ' +
      'every page has the report\'s head and its whole `summary`, and its rows by `index`: at most `limit` (50 by default, 1 to 200; fewer when they would not fit 512 KiB), ' +
      'then `next_cursor` until the last row is listed (null). A walk lists the rows the report held at its first page, each once, also while the import is still `in_progress` ' +
      '(a new walk lists the rows recorded since). A bad `limit`, or a cursor that is not one of this import\'s report, is a 400 naming it.',
  })
  @ApiOkResponse({ type: ImportReportPageDto, description: 'A page of the report: `{import_id, flow_id, dry_run, status, failure?, summary, rows, created_at, next_cursor}`' })
  @ApiWrongCountry('The import')
  async importReport(@CurrentPrincipal() principal: Principal, @Param('import_id') importId: string, @Query() query: ListQueryDto): Promise<ImportReportPage> {
    if (principal.kind !== 'api_token') throw new DomainError('forbidden', 'Read imports with an API token of the application');
    // Without `limit` and `cursor` the whole report, as an import answers it; with either, a page.
    const whole = query.limit === undefined && query.cursor === undefined;
    const limit = parseLimit(query.limit);
    if (!isImportId(importId)) throw notFound('Import');
    const home = countryOfImportId(importId);
    // A wrong door only if the import is there for an application of the token's account.
    if (home) await this.homeCountry.requireHere(home, 'import', importId, 'Import', audienceOf(principal));
    const applicationId = await this.accounts.applicationFor(principal, 'import', importId);
    const read = (request: ImportGetRequest) => firstValueFrom(this.clients.own.send<ImportReportPageMessage>(RECORDS_IMPORT_GET, request));
    if (whole) {
      // Read in pages (a large report is more than one message on the bus carries) over the rows it
      // held at the first one, put together here.
      const { next: after, ...report } = await read({ application_id: applicationId, import_id: importId, limit: IMPORT_REPORT_MESSAGE_ROWS });
      for (let next = after; next; ) {
        const page = await read({ application_id: applicationId, import_id: importId, limit: IMPORT_REPORT_MESSAGE_ROWS, position: next });
        report.rows.push(...page.rows);
        next = page.next;
      }
      return { ...report, next_cursor: null };
    }
    const position = importReportPosition(query.cursor, importId);
    const { next, ...page } = await read({ application_id: applicationId, import_id: importId, limit, ...(position ? { position } : {}) });
    return { ...page, next_cursor: next ? importReportCursor(importId, next) : null };
  }

  @Get('api/v1/applications/:application_id/consent_status')
  @RequireScopes('records:read')
  @ApiOperation({
    summary: "A person's current status per purpose: granted, declined, withdrawn, objected or noticed",
    description:
      'Name the person by exactly one of `subject[external_id]`, `subject[email]` or `subject[id]`, and nothing else (400 naming the parameter ' +
      'otherwise). The answer weighs the records of the application (the Record API, captures, imports, form builders) and ' +
      'the consents the person decided on its hosted pages (a completed consent session counts as a record with its ' +
      '`rec_…` id at its `completed_at`, each purpose as its `consent.granted`/`consent.denied` event says; what it granted is ' +
      '`withdrawn` from its revocation, or from when the person withdrew that purpose on its own or a newer decision took it back). ' +
      'The newest decision holding a purpose decides it; a withdrawal ' +
      'made after it turns a grant `withdrawn`; a grant whose term (`consent_duration`) ran out is `expired`. A person homed ' +
      'in another country of the deployment is answered 421 with `home_country` and nothing else; 404 when no such person ' +
      'is recorded.',
  })
  @ApiQuery({
    name: 'subject[external_id]',
    required: false,
    description: 'As recorded: up to 200 characters without the spaces around it (which are not part of it), no control characters',
    schema: { type: 'string', minLength: 1, pattern: '\\S' },
  })
  @ApiQuery({ name: 'subject[email]', required: false, schema: { type: 'string', format: 'email' } })
  @ApiQuery({ name: 'subject[id]', required: false, schema: { type: 'string', pattern: `^sub_[0-9a-z]{${SUBJECT_ID_LENGTH}}$` } })
  @ApiOkResponse({ type: ConsentStatusDto })
  @ApiWrongCountry('The person')
  @ApiResponse({
    status: 503,
    description:
      'A service or the database did not answer (`service_unavailable`); with `Retry-After: 1` and `retry_after` when the database ' +
      'connection was lost or none was to be had (PostgreSQL at its connection limit): try again',
    schema: { $ref: getSchemaPath(ErrorBodyDto) },
  })
  async status(@CurrentPrincipal() principal: Principal, @Param('application_id') applicationId: string, @Query() query: Record<string, unknown>) {
    requireApplicationAccess(principal, this.index.application(applicationId));
    const address = consentStatusAddress(query);
    if ((await this.residency.requireHomedHere(applicationId, address)) === 'unknown') throw notFound('Subject');
    const request: ConsentStatusRequest = { application_id: applicationId, ...address };
    return firstValueFrom(this.clients.own.send<ConsentStatusReply>(RECORDS_CONSENT_STATUS, request));
  }

}
