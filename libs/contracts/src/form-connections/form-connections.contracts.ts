import { Type } from 'class-transformer';
import { IsBase64, IsIn, IsObject, IsOptional, IsString, Length, Matches, MaxLength, ValidateNested } from 'class-validator';
import { AuditActor } from '../audit';
import { APPLICATION_ID, FLOW_ID } from '../patterns';

/**
 * decisions: hosted form-builder connections (a form, the flow it answers, the webhook secret we issue,
 * an optional personal access token, the field mapping) and the builder's signed submissions. The
 * gateway manages connections for the application it authenticated and forwards each inbound
 * delivery with its raw bytes; the decisions service holds the secrets and verifies the signature.
 */
export const FORM_CONNECTIONS_CREATE = 'decisions.form-connections.create';
export const FORM_CONNECTIONS_LIST = 'decisions.form-connections.list';
export const FORM_CONNECTIONS_GET = 'decisions.form-connections.get';
export const FORM_CONNECTIONS_UPDATE_MAPPING = 'decisions.form-connections.update-mapping';
export const FORM_CONNECTIONS_ROTATE_SECRET = 'decisions.form-connections.rotate-secret';
export const FORM_CONNECTIONS_DELETE = 'decisions.form-connections.delete';
/** One inbound delivery of a form builder's webhook. */
export const FORM_CONNECTIONS_RECEIVE = 'decisions.form-connections.receive';

export const FORM_CONNECTION_ID = /^fcn_[a-z]{2}[0-9a-z]{20}$/;
/** Typeform form ids are short alphanumerics (the `u6nXL7` of https://mysite.typeform.com/to/u6nXL7). */
export const FORM_ID = /^[A-Za-z0-9]{1,64}$/;

/** A bearer token's syntax (RFC 6750 `b64token`): what can follow `Authorization: Bearer`, as Typeform's `tfp_…` tokens do. */
export const PERSONAL_ACCESS_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** Raw webhook bodies are sent base64-encoded: 512 KiB of body stays under NATS's 1 MiB message limit. */
export const MAX_FORM_SUBMISSION_BYTES = 512 * 1024;

class ApplicationScoped {
  @Matches(APPLICATION_ID)
  application_id: string;
}

class ActorScoped extends ApplicationScoped {
  @ValidateNested()
  @Type(() => AuditActor)
  actor: AuditActor;
}

export class FormConnectionCreateRequest extends ActorScoped {
  @IsIn(['typeform'])
  platform: 'typeform';

  @Matches(FORM_ID)
  form_id: string;

  @Matches(FLOW_ID)
  flow_id: string;

  @IsOptional()
  @IsString()
  @Length(1, 512)
  @Matches(PERSONAL_ACCESS_TOKEN)
  personal_access_token?: string;

  /** `{email, external_id?, purposes: {key: {field, choice?}}}`: checked against the form and the flow by the mapping rules. */
  @IsObject()
  mapping: Record<string, unknown>;

  /** The JSON of Typeform's `GET /forms/{form_id}`; fetched with the token when absent. */
  @IsOptional()
  @IsObject()
  form_definition?: Record<string, unknown>;
}

export class FormConnectionRefRequest extends ApplicationScoped {
  @Matches(FORM_CONNECTION_ID)
  id: string;
}

export class FormConnectionActionRequest extends ActorScoped {
  @Matches(FORM_CONNECTION_ID)
  id: string;
}

export class FormConnectionListRequest extends ApplicationScoped {
  /** The connections after this key (`<created_at>#<id>`), for a list longer than one message (ListPart). */
  @IsOptional()
  @IsString()
  @Length(1, 200)
  after?: string;
}

export class FormConnectionMappingRequest extends FormConnectionActionRequest {
  @IsObject()
  mapping: Record<string, unknown>;

  @IsOptional()
  @IsObject()
  form_definition?: Record<string, unknown>;
}

export interface FormConnectionMessage {
  id: string;
  platform: 'typeform';
  form_id: string;
  flow_id: string;
  mapping: { email: string; external_id?: string; purposes: Record<string, { field: string; choice?: string }> };
  /** Whether a personal access token is kept (the token itself is never shown again). */
  personal_access_token: boolean;
  /** Until when the secret before the last rotation is still honoured; null when none is. */
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface FormConnectionWithSecretMessage extends FormConnectionMessage {
  /** Shown once: at creation and after a rotation. */
  secret: string;
}

export class FormSubmissionReceiveRequest {
  @Matches(FORM_CONNECTION_ID)
  connection_id: string;

  /** The `Typeform-Signature` header as received, if any. */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  signature?: string;

  /** The body exactly as received, base64: the signature covers these bytes. */
  @IsBase64()
  @MaxLength(Math.ceil(MAX_FORM_SUBMISSION_BYTES / 3) * 4)
  raw_body: string;
}

export interface FormSubmissionReceiveReply {
  accepted: true;
  /** The builder's test request: nothing was recorded. */
  test?: true;
  record_id?: string;
}
