import { Type } from 'class-transformer';
import {
  IsEmail,
  IsIn,
  IsInt,
  IsISO8601,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { IsExternalId } from '../subject-fields';
import { APPLICATION_ID, FLOW_ID } from '../patterns';

/**
 * decisions: sessions (the bounded asks), the participant steps, completion, and the consent token.
 * Everything here is personal data of the session's country and never crosses a border, except
 * through the directory as opaque references.
 */
export const DECISIONS_CREATE = 'decisions.sessions.create';
export const DECISIONS_VIEW = 'decisions.sessions.view';
export const DECISIONS_TRANSITION = 'decisions.sessions.transition';
export const DECISIONS_SIGN_IN = 'decisions.sessions.sign-in';
export const DECISIONS_PROOF = 'decisions.sessions.proof';
export const DECISIONS_COMPLETE = 'decisions.sessions.complete';
export const DECISIONS_CANCEL = 'decisions.sessions.cancel';
export const DECISIONS_VERIFY = 'decisions.sessions.verify';
export const DECISIONS_EXCHANGE = 'decisions.sessions.exchange';
/** Development only: the mail the service sent, newest first. */
export const DEV_MAILBOX_LIST = 'decisions.dev-mailbox.list';

export const SESSION_TOKEN_PATTERN = /^dts_[a-z]{2}[0-9a-z]{30}$/;

export const DELIVERY_MODES = ['embed', 'popup', 'redirect', 'direct'] as const;
export type DeliveryMode = (typeof DELIVERY_MODES)[number];
export const DECISION_KINDS = ['consent', 'approval'] as const;

export class DecisionSubjectInput {
  @IsOptional()
  @IsEmail()
  email?: string;

  @IsOptional()
  @IsExternalId()
  external_id?: string;
}

export class ApprovalValueInput {
  /** Integer minor units (cents). */
  @IsInt()
  @Min(0)
  amount: number;

  @Matches(/^[A-Z]{3}$/, { message: 'currency must be an ISO 4217 code such as EUR' })
  currency: string;
}

export class ApprovalInput {
  @IsString()
  @Length(1, 200)
  title: string;

  @IsOptional()
  @IsString()
  @Length(0, 2000)
  description?: string;

  @IsString()
  @Length(1, 200)
  action: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => ApprovalValueInput)
  value?: ApprovalValueInput;

  @IsIn(['scope', 'action', 'value', 'time', 'escalation', 'reputation'])
  trigger: string;

  @IsOptional()
  @IsString()
  @Length(1, 200)
  agent_id?: string;
}

export class CreateDecisionRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  /** Which URL family minted the session (both resolve it). */
  @IsIn(['decisions', 'consent_sessions'])
  via: 'decisions' | 'consent_sessions';

  @IsIn(DECISION_KINDS as unknown as string[])
  kind: 'consent' | 'approval';

  @IsOptional()
  @Matches(FLOW_ID)
  flow_id?: string;

  @IsIn(DELIVERY_MODES as unknown as string[])
  delivery_mode: DeliveryMode;

  @IsOptional()
  @IsString()
  embed_origin?: string;

  @IsOptional()
  @IsString()
  redirect_uri?: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => DecisionSubjectInput)
  subject?: DecisionSubjectInput;

  @IsOptional()
  @IsISO8601({ strict: true })
  deadline_at?: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => ApprovalInput)
  approval?: ApprovalInput;

  @IsOptional()
  @Matches(/^[a-z]{2}(-[A-Z]{2})?$/)
  locale?: string;
}

export interface DecisionCreated {
  /** The session's public id (`dcs_…`): what its events and webhooks name (never the token). */
  session_id: string;
  session_token: string;
  kind: 'consent' | 'approval';
  status: string;
  delivery_mode: DeliveryMode;
  flow_id: string | null;
  flow_version: number | null;
  expires_at: string;
  deadline_at: string | null;
  created_at: string;
}

export class SessionTokenRequest {
  @Matches(SESSION_TOKEN_PATTERN, { message: 'session_token must be a dts_ token' })
  session_token: string;
}

/**
 * A step after signing in: the participant proof the sign-in handed to the browser that signed in
 * (the gateway reads it from `X-Participant-Proof`).
 */
export class ProvenStepRequest extends SessionTokenRequest {
  @IsOptional()
  @IsString()
  @Length(1, 100)
  participant_proof?: string;
}

export class TransitionRequest extends ProvenStepRequest {
  @IsString()
  to: string;

  @IsOptional()
  @IsEmail()
  email?: string;

  @IsOptional()
  @IsString()
  @Length(1, 16)
  code?: string;
}

export class SignInRequest extends SessionTokenRequest {
  @IsEmail()
  email: string;

  /** The language the page is shown in: the code's mail is written in it (else the session's). */
  @IsOptional()
  @Matches(/^[a-z]{2}(-[A-Z]{2})?$/)
  locale?: string;
}

export interface SignInReply {
  sent: true;
  expires_at: string;
}

/** The person signs in again on a session signed in to elsewhere: a new participant proof for this browser. */
export class ProofRequest extends SessionTokenRequest {
  @IsEmail()
  email: string;

  @IsString()
  @Length(1, 16)
  code: string;
}

export interface ProofReply {
  participant_proof: string;
}

export class CompleteRequest extends ProvenStepRequest {
  @IsString()
  outcome: string;

  @IsOptional()
  @IsObject()
  purposes?: Record<string, boolean>;

  @IsOptional()
  @IsObject()
  counter?: Record<string, unknown>;
}

export interface CompleteReply {
  outcome: string;
  exchange_token: string;
  completed_at: string;
  redirect_to?: string;
}

export class CancelRequest extends ProvenStepRequest {
  @IsOptional()
  @IsString()
  @Length(0, 200)
  reason?: string;

  @IsIn(['user', 'host'])
  cancelled_by: 'user' | 'host';
}

export class VerifyRequest extends SessionTokenRequest {
  /** The calling application: a session of another application is answered as not found. */
  @Matches(APPLICATION_ID)
  application_id: string;

  @IsString()
  @Length(1, 200)
  consent_token: string;
}

export interface VerifyReply {
  valid: boolean;
  status: string;
  outcome?: string;
}

export class ExchangeRequest extends SessionTokenRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  @IsString()
  @Length(1, 200)
  exchange_token: string;
}

export interface ExchangeReply {
  status: string;
  outcome: string;
  record_id: string;
  claims: Record<string, unknown>;
  attestations: Array<Record<string, unknown>>;
  credentials: Array<Record<string, unknown>>;
}

/** The participant view: what the hosted pages and the participant API show. */
export interface ParticipantViewMessage {
  session_token: string;
  kind: 'consent' | 'approval';
  status: string;
  path: 'standard' | 'informed';
  delivery_mode: DeliveryMode;
  embed_origin: string | null;
  redirect_uri: string | null;
  deadline_at: string | null;
  expires_at: string;
  locale: string;
  now: string;
  application: { id: string; name: string };
  allowed_transitions: string[];
  signed_in: { email_hint: string } | null;
  outcome: string | null;
  flow: Record<string, unknown> | null;
  approval: Record<string, unknown> | null;
  /**
   * Only in the answer of the step that signed the person in: the secret the steps after it need
   * (`X-Participant-Proof`). Shown once; the session keeps its hash.
   */
  participant_proof?: string;
}

export class DevMailboxRequest {
  @IsOptional()
  @IsEmail()
  to?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;
}

export interface DevMailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  sent_at: string;
}
