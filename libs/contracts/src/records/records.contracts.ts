import { Type } from 'class-transformer';
import { IsBoolean, IsEmail, IsIn, IsISO8601, IsObject, IsOptional, IsString, Length, Matches, ValidateNested } from 'class-validator';
import { APPLICATION_ID, FLOW_ID } from '../patterns';

/** decisions: consent the organisation collected in its own form, recorded through the Record API. */
export const RECORDS_CREATE = 'decisions.records.create';
export const RECORDS_CONSENT_STATUS = 'decisions.records.consent-status';

export class RecordSubjectInput {
  @IsEmail()
  email: string;

  @IsOptional()
  @IsString()
  @Length(1, 200)
  external_id?: string;
}

export class CreateConsentRecordRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  @Matches(FLOW_ID)
  flow_id: string;

  @ValidateNested()
  @Type(() => RecordSubjectInput)
  subject: RecordSubjectInput;

  /** Purpose key → `{decision, default_checked, mandatory}`; checked against the flow by the capture rules. */
  @IsObject()
  decisions: Record<string, { decision: string; default_checked?: boolean; mandatory?: boolean }>;

  @IsISO8601({ strict: true })
  captured_at: string;

  @IsOptional()
  @IsString()
  @Length(1, 200)
  idempotency_key?: string;

  @IsOptional()
  @Matches(/^[0-9a-f]{64}$/)
  notice_digest?: string;

  @IsIn(['controller_attested', 'imported'])
  channel: 'controller_attested' | 'imported';

  /** The fingerprint of the caller's body (without the key): the same key with another body is a conflict. */
  @Matches(/^[0-9a-f]{64}$/)
  request_fingerprint: string;

  @IsOptional()
  @IsBoolean()
  send_receipt?: boolean;
}

export interface ConsentRecordMessage {
  record_id: string;
  status: 'granted' | 'declined';
  flow_id: string;
  flow_version: number;
  subject: { id: string };
  purposes: Record<string, { status: 'granted' | 'declined' | 'objected' | 'noticed'; basis: string }>;
  captured_at: string;
  recorded_at: string;
  channel: string;
  supersedes?: string;
}

export interface CreateConsentRecordReply {
  consent_record: ConsentRecordMessage;
  /** False when the idempotency key named a record made before with the same body. */
  created: boolean;
}

export class ConsentStatusRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  @IsOptional()
  @IsString()
  @Length(1, 200)
  external_id?: string;

  @IsOptional()
  @IsEmail()
  email?: string;

  @IsOptional()
  @Matches(/^sub_[0-9a-z]{20}$/)
  subject_id?: string;
}

export interface ConsentStatusReply {
  subject: { id: string };
  purposes: Record<string, { status: 'granted' | 'declined' | 'withdrawn' | 'objected' | 'noticed'; record_id: string; updated_at: string }>;
}
