import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ListQueryDto } from '../connect/connect.dto';
import { ArrayMaxSize, ArrayMinSize, buildMessage, IsArray, IsBoolean, IsDefined, IsIn, IsInt, IsObject, IsOptional, IsString, Length, Matches, Min, ValidateBy, ValidateNested } from 'class-validator';
import { decisionShapeIssues, isZonedDateTime, MAX_IMPORT_ROWS } from '@dcr/domain';
import { IsExternalId, IsSubjectEmail } from '../residency/subject-fields';
import { ErrorBodyDto, ErrorDetailDto } from '../openapi/openapi.decorators';

/**
 * A capture time as imports take it (isZonedDateTime): a date and time with its zone, a day the
 * month has, year 1 or later in UTC. validator.js's strict ISO 8601 check refused years 1 to 99,
 * which imports record.
 */
const IsCaptureTime = () =>
  ValidateBy({
    name: 'isCaptureTime',
    validator: {
      validate: (value: unknown) => isZonedDateTime(value),
      defaultMessage: buildMessage((each) => `${each}$property must be a date and time with its zone (2026-11-20T10:00:00Z, or an offset), in year 1 or later`),
    },
  });

/** Why a body without the person is refused, on `subject`: a record, a commit, a browser commit alike. */
export const SUBJECT_REQUIRED = 'subject is required: {email, external_id?}';

export class RecordSubjectDto {
  @ApiProperty({ example: 'ada@example.com', maxLength: 254, description: 'Binds the person; kept only in their home country. At most 254 characters, and at most 64 bytes (UTF-8) before the @: an address over either is refused naming the limit' })
  @IsSubjectEmail()
  email: string;

  @ApiPropertyOptional({
    example: 'crm-4711',
    description:
      "The organisation's own id for the person: up to 200 characters without the spaces around it (which are not kept), no control characters; one of spaces only is refused. Compared exactly (case and Unicode form count)",
    pattern: '\\S',
  })
  @IsOptional()
  @IsExternalId()
  external_id?: string;
}

export class AttestedDecisionDto {
  @ApiProperty({ enum: ['granted', 'declined'], description: 'An unticked box is a decline, never silence' })
  @IsIn(['granted', 'declined'])
  decision: 'granted' | 'declined';

  @ApiProperty({ description: 'Was the control shown ticked? Stated on every decision (a missing one is a 422 naming the purpose); true is refused for consent purposes' })
  @IsBoolean()
  default_checked: boolean;

  @ApiProperty({ description: 'Was the control mandatory? Stated on every decision (a missing one is a 422 naming the purpose); true is refused for every purpose' })
  @IsBoolean()
  mandatory: boolean;
}

export class CreateConsentRecordDto {
  /** A malformed decision is named beside the body's other malformed fields (EdgeValidationPipe). */
  static companionIssues(body: Record<string, unknown>) {
    return decisionShapeIssues(body.decisions);
  }

  @ApiProperty({ example: 'flw_dev_0123456789abcdef' })
  @Matches(/^flw_[a-z]{2,8}_[0-9a-z]{16}$/, { message: 'flow_id must be a flw_ id' })
  flow_id: string;

  @ApiProperty({ type: RecordSubjectDto })
  @IsDefined({ message: SUBJECT_REQUIRED })
  @ValidateNested()
  @IsObject()
  @Type(() => RecordSubjectDto)
  subject: RecordSubjectDto;

  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/AttestedDecisionDto' },
    example: { newsletter: { decision: 'granted', default_checked: false, mandatory: false } },
    description: 'Every purpose the flow resolves that takes a decision, keyed by purpose',
  })
  @IsObject()
  decisions: Record<string, AttestedDecisionDto>;

  @ApiProperty({
    format: 'date-time',
    example: '2026-11-20T10:00:00Z',
    description:
      'When the organisation captured the decision: a date and time with its zone (UTC `Z`, or an offset, which is converted); a date alone or a time without a zone is refused. ' +
      'It chooses the flow version the record is decided against: the one in force then (the newest activated at or before it; the first version for a time before every activation), unless `flow_version` pins one',
  })
  @IsCaptureTime()
  captured_at: string;

  @ApiPropertyOptional({
    type: 'integer',
    example: 1,
    minimum: 1,
    description:
      'The flow version the person was shown, when you know it: it must be an activated version of the flow (a draft or an unknown version is a 422 naming `flow_version`), ' +
      'and `captured_at` must not precede its activation (a 422 naming `captured_at`), except for the flow\'s first version. An older version than the one in force is taken (a form still showing it). ' +
      'Absent: the version in force at `captured_at`',
  })
  @IsOptional()
  @IsInt({ message: 'flow_version must be a version number of the flow (an integer)' })
  @Min(1, { message: 'flow_version must be 1 or more' })
  flow_version?: number;

  @ApiPropertyOptional({ minLength: 1, maxLength: 200, description: 'Same key and body → the same record (200); same key, other body → 409 (1 to 200 characters)' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  idempotency_key?: string;

  @ApiPropertyOptional({
    description:
      "The notice the person saw, as the flow version's notice_digest (GET /api/v1/flows/<id>): the same digest records every purpose's wording as matched in the receipt (extensions.wording_drift), another as drifted; a drift is never refused (a value that is not 64 lower-case hex characters is a 422)",
    pattern: '^[0-9a-f]{64}$',
  })
  @IsOptional()
  @Matches(/^[0-9a-f]{64}$/, { message: 'notice_digest must be 64 lower-case hex characters' })
  notice_digest?: string;
}

/** The rows of an import that are not objects (`null`, a string, an array), each named by its index: a 422 lists them all. */
export function importRowsNotObjects(records: unknown[]): Array<{ field: string; reason: string }> {
  return records.flatMap((row, i) =>
    typeof row === 'object' && row !== null && !Array.isArray(row) ? [] : [{ field: `records[${i}]`, reason: 'must be an object {subject, decisions, captured_at, idempotency_key?}' }],
  );
}

/** A decision of an import row: the presentation flags may be left out (history seldom kept them; read as false). */
export class ImportedDecisionDto {
  @ApiProperty({ enum: ['granted', 'declined'], description: 'An unticked box is a decline, never silence' }) decision: 'granted' | 'declined';
  @ApiPropertyOptional({ description: 'Was the control shown ticked? Absent: false; true is refused for consent purposes' }) default_checked?: boolean;
  @ApiPropertyOptional({ description: 'Was the control mandatory? Absent: false; true is refused for every purpose' }) mandatory?: boolean;
}

/** One row of an import. Rows are checked one by one: a bad row is refused by name in the report, it does not fail the import. */
export class ImportRowDto {
  @ApiProperty({ type: RecordSubjectDto }) subject: RecordSubjectDto;
  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/ImportedDecisionDto' },
    example: { newsletter: { decision: 'granted' } },
    description: 'Every purpose the flow resolves that takes a decision, keyed by purpose',
  })
  decisions: Record<string, ImportedDecisionDto>;
  @ApiProperty({
    format: 'date-time',
    example: '2021-03-04T05:06:07Z',
    description: 'When the decision was captured, with its zone (`Z` or an offset), as the Record API takes it; the row is decided against the flow version in force then, as a record is',
  })
  captured_at: string;
  @ApiPropertyOptional({ minLength: 1, maxLength: 200, description: 'A key used before answers the earlier record (the same body) or refuses the row (another body); 1 to 200 characters, else the row is refused naming it' }) idempotency_key?: string;
}


export class ImportConsentRecordsDto {
  @ApiProperty({ example: 'flw_dev_0123456789abcdef' })
  @Matches(/^flw_[a-z]{2,8}_[0-9a-z]{16}$/, { message: 'flow_id must be a flw_ id' })
  flow_id: string;

  @ApiProperty({ description: 'true: check every row and write nothing' })
  @IsBoolean()
  dry_run: boolean;

  @ApiPropertyOptional({ description: 'Mail each person their receipt (off by default for imports)', default: false })
  @IsOptional()
  @IsBoolean()
  send_receipts?: boolean;

  @ApiProperty({
    description: `Up to ${MAX_IMPORT_ROWS} rows: {subject: {email, external_id?}, decisions: {key: {decision, default_checked?, mandatory?}}, captured_at, idempotency_key?} (a row may leave the presentation flags out: history seldom kept them; they are then read as false). Rows are checked one by one; a bad row is refused by name in the report, it does not fail the import.`,
    type: [ImportRowDto],
    minItems: 1,
    maxItems: MAX_IMPORT_ROWS,
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_IMPORT_ROWS)
  // Each row an object: checked by the controller (importRowsNotObjects), which names the rows.
  records: Array<Record<string, unknown>>;
}

/** One purpose of a record as recorded: its outcome and its legal basis. */
export class RecordedPurposeDto {
  @ApiProperty({ enum: ['granted', 'declined', 'objected', 'noticed'] }) status: string;
  @ApiProperty({ example: 'consent', description: "The purpose's legal basis in the flow version" }) basis: string;
}

/** A record's overall `status`, as the Record API and a capture's commit answer it (recordStatus). */
export const RECORD_STATUS_RULE =
  'granted when any consent purpose is granted; declined when every consent purpose is declined. Without consent purposes: granted while a legitimate-interest purpose stands noticed (an accepted opt-out counts as granted), declined when every one was objected to; a notice-only record is granted';

/** A consent record as the Record API answers it. */
export class ConsentRecordDto {
  @ApiProperty({ example: 'rec_us0123456789abcdefghij' }) record_id: string;
  @ApiProperty({ enum: ['granted', 'declined'], description: RECORD_STATUS_RULE }) status: string;
  @ApiProperty({ example: 'flw_dev_0123456789abcdef' }) flow_id: string;
  @ApiProperty({ type: 'integer', example: 1 }) flow_version: number;
  @ApiProperty({ type: 'object', properties: { id: { type: 'string', example: 'sub_us0123456789abcdefgh' } }, required: ['id'] }) subject: { id: string };
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/RecordedPurposeDto' } }) purposes: Record<string, RecordedPurposeDto>;
  @ApiProperty({ format: 'date-time' }) captured_at: string;
  @ApiProperty({ format: 'date-time' }) recorded_at: string;
  @ApiProperty({ example: 'controller_attested', description: 'How the decision reached the service' }) channel: string;
  @ApiPropertyOptional({ description: "The person's record this one replaces" }) supersedes?: string;
  @ApiPropertyOptional({ description: 'A newer record of the person that replaces this one at once (a record captured before it)' }) superseded_by?: string;
}

export class ConsentRecordEnvelopeDto {
  @ApiProperty({ type: ConsentRecordDto }) consent_record: ConsentRecordDto;
}

/** A purpose's current status for a person. */
export class PurposeStatusDto {
  @ApiProperty({ enum: ['granted', 'declined', 'withdrawn', 'objected', 'noticed', 'expired'] }) status: string;
  @ApiProperty({ example: 'rec_us0123456789abcdefghij', description: 'The record that decided it: a consent record, or the record of a consent decided on the hosted pages' }) record_id: string;
  @ApiPropertyOptional({ example: 'flw_dev_0123456789abcdef', description: "The flow of the decision deciding it (a purpose key can be in several flows: the newest decision decides)" }) flow_id?: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class ConsentStatusDto {
  @ApiProperty({ type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }) subject: { id: string };
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/PurposeStatusDto' } }) purposes: Record<string, PurposeStatusDto>;
}

/** What became of one import row. */
export class ImportRowOutcomeDto {
  @ApiProperty({ type: 'integer', example: 0, description: "The row's index in `records`" }) index: number;
  @ApiProperty({ enum: ['recorded', 'refused'] }) outcome: 'recorded' | 'refused';
  @ApiPropertyOptional({ example: 'rec_us0123456789abcdefghij', description: 'recorded: the record (a dry run: the earlier record a used idempotency key names)' }) record_id?: string;
  @ApiPropertyOptional({ type: [ErrorDetailDto], maxItems: 10, description: 'refused: the problems of the row, by field, at most 10' }) reasons?: ErrorDetailDto[];
  @ApiPropertyOptional({ example: 90, description: 'refused: how many problems were left out of `reasons` when there were more than 10' }) reasons_omitted?: number;
  @ApiPropertyOptional({ enum: [true], description: 'recorded: the row\'s idempotency_key answered a record made before (by an earlier request, import or row of this one): nothing new was written. `summary.recorded` counts these rows too' }) replayed?: true;
  @ApiPropertyOptional({
    type: 'integer',
    example: 1,
    description: 'The flow version the row was decided against: the one in force at its `captured_at` (the first version for a time before every activation, and for a `captured_at` that is not a time). Absent in reports made before the service said it',
  })
  flow_version?: number;
}

/** Where and why an import stopped (status `failed`). */
export class ImportFailureDto {
  @ApiProperty({ type: 'integer', example: 500, description: 'How many rows were decided before it (in the order rows are decided: by `captured_at`); `rows` lists which' }) offset: number;
  @ApiProperty({ example: 'service_unavailable' }) code: string;
  @ApiProperty() message: string;
}

export class ImportSummaryDto {
  @ApiProperty({ type: 'integer', example: 601 }) recorded: number;
  @ApiProperty({ type: 'integer', example: 1 }) refused: number;
}

/** An import's report: the answer of the import, and of GET /api/v1/consent_records/imports/<import_id>. */
export class ImportReportDto {
  @ApiProperty({ example: 'imp_us0123456789abcdefghij', description: 'Names the country that keeps the report (a dry run\'s is not kept)' }) import_id: string;
  @ApiProperty({ example: 'flw_dev_0123456789abcdef' }) flow_id: string;
  @ApiProperty() dry_run: boolean;
  @ApiProperty({
    enum: ['completed', 'in_progress', 'failed'],
    description: '`completed`: every row was decided; `in_progress`: its chunks are being recorded, or it stopped without word; `failed`: see `failure`',
  })
  status: 'completed' | 'in_progress' | 'failed';
  @ApiPropertyOptional({ type: ImportFailureDto, description: 'Only with status `failed`' }) failure?: ImportFailureDto;
  @ApiProperty({ type: ImportSummaryDto }) summary: ImportSummaryDto;
  @ApiProperty({ type: [ImportRowOutcomeDto], description: 'Per row, by `index` (`failed`: the rows decided before the failure; rows are decided by `captured_at`, so not always the first ones)' }) rows: ImportRowOutcomeDto[];
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

/** An import as GET /api/v1/consent_records/imports lists it: its report's head, without its rows. */
export class ImportListItemDto {
  @ApiProperty({ example: 'imp_us0123456789abcdefghij' }) import_id: string;
  @ApiProperty({ example: 'flw_dev_0123456789abcdef' }) flow_id: string;
  @ApiProperty({ enum: ['completed', 'in_progress', 'failed'] }) status: 'completed' | 'in_progress' | 'failed';
  @ApiPropertyOptional({ type: ImportFailureDto, description: 'Only with status `failed`' }) failure?: ImportFailureDto;
  @ApiProperty({ type: ImportSummaryDto }) summary: ImportSummaryDto;
  @ApiProperty({ example: 10000, description: 'How many rows its report holds (GET …/imports/<import_id> lists them)' }) rows_reported: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

/** The query of GET /api/v1/consent_records/imports. */
export class ImportListQueryDto extends ListQueryDto {
  @ApiPropertyOptional({ example: 'tp_dev_0123456789abcdef', description: "An application of the token's account; the token's own by default" })
  @IsOptional()
  @IsString({ message: 'application_id must be a tp_ id, given once' })
  @Matches(/^tp_[a-z]{2,8}_[0-9a-z]{16}$/, { message: 'application_id must be a tp_ id' })
  application_id?: string;
}

/**
 * A page of an import's report (GET /api/v1/consent_records/imports/<import_id>): the report's head
 * and whole `summary` on every page, its rows by `index` one page at a time, and the cursor of the next page.
 */
export class ImportReportPageDto extends ImportReportDto {
  @ApiProperty({
    type: [ImportRowOutcomeDto],
    description:
      'This page\'s rows, by `index`: at most `limit` (fewer when they would not fit 512 KiB); `summary` counts every row of the report ' +
      '(`failed`: the rows decided before the failure; rows are decided by `captured_at`, so not always the first ones)',
  })
  declare rows: ImportRowOutcomeDto[];

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Pass as `cursor` for the next page; null on the last one. A walk lists the rows the report held at its first page (an import still `in_progress` adds rows after it; a new walk lists them)',
  })
  next_cursor: string | null;
}

/**
 * The error of a real import whose chunk failed after earlier chunks were recorded: that chunk's
 * error, naming the import whose report says where it stopped and how many rows were decided.
 */
export class ImportStoppedErrorDto extends ErrorBodyDto {
  @ApiPropertyOptional({
    example: 'imp_us0123456789abcdefghij',
    description: 'Only when a chunk failed after earlier ones were recorded: the import, whose report (`status: failed`) keeps the rows decided',
  })
  import_id?: string;

  @ApiPropertyOptional({ type: 'integer', example: 500, description: 'With `import_id`: how many rows were decided (and kept) before the failure, in `captured_at` order (the report lists which); the others can be sent again' })
  rows_decided?: number;
}
