import { IsEmail, IsIn, IsInt, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { APPLICATION_ID } from '../patterns';

/**
 * decisions: the unified inbox of one person (signed in by a mailed one-time code): the pending
 * consent and approval requests addressed to their e-mail in this country.
 */
export const INBOX_SIGN_IN = 'decisions.inbox.sign-in';
export const INBOX_OPEN = 'decisions.inbox.open';
export const INBOX_LIST = 'decisions.inbox.list';
export const INBOX_CLOSE = 'decisions.inbox.close';
/** The person's consent records in this country (their withdrawal entry point), and withdrawing. */
export const INBOX_RECORDS = 'decisions.inbox.records';
export const INBOX_WITHDRAW = 'decisions.inbox.withdraw';

export class InboxSignInRequest {
  @IsEmail()
  email: string;

  @IsOptional()
  @Matches(/^[a-z]{2}(-[A-Z]{2})?$/)
  locale?: string;
}

export class InboxOpenRequest {
  @IsEmail()
  email: string;

  @IsString()
  @Length(1, 16)
  code: string;
}

export interface InboxOpenReply {
  inbox_token: string;
  expires_at: string;
}

export class InboxTokenRequest {
  @IsString()
  @Length(10, 200)
  inbox_token: string;
}

export class InboxListRequest extends InboxTokenRequest {
  @IsOptional()
  @IsIn(['consent', 'approval'])
  kind?: 'consent' | 'approval';

  @IsOptional()
  @IsIn(['scope', 'action', 'value', 'time', 'escalation', 'reputation'])
  trigger?: string;

  @IsOptional()
  @Matches(APPLICATION_ID)
  application_id?: string;

  @IsIn(['deadline', 'newest'])
  sort: 'deadline' | 'newest';

  @IsInt()
  @Min(1)
  @Max(200)
  limit: number;

  @IsOptional()
  @IsString()
  cursor?: string;
}

export interface InboxItemMessage {
  session_token: string;
  kind: 'consent' | 'approval';
  status: string;
  title: string;
  application_id: string;
  flow_id: string | null;
  trigger: string | null;
  deadline_at: string | null;
  expires_at: string;
  created_at: string;
}

export interface InboxPageMessage {
  email: string;
  data: InboxItemMessage[];
  next_cursor: string | null;
}

export class InboxRecordsRequest extends InboxTokenRequest {
  @IsOptional()
  @Matches(APPLICATION_ID)
  application_id?: string;

  /** The most records the page holds (the answer may hold fewer, to fit one message, and still name the next page). */
  @IsInt()
  @Min(1)
  @Max(200)
  limit: number;

  /**
   * The page after the one that named this cursor (`next_cursor`): opaque, naming the list (every
   * organisation's, or one's) and the last position listed (recordsPageCursor), never the person.
   * Its form is checked by recordsPageAfter (400 naming `cursor`); this only bounds the message.
   */
  @IsOptional()
  @IsString()
  @Length(1, 8192)
  cursor?: string;
}

/** One page of the person's records, newest given first (recordsPagePosition). */
export interface InboxRecordsPage {
  data: InboxRecordMessage[];
  next_cursor: string | null;
}

export class InboxWithdrawRequest extends InboxTokenRequest {
  @Matches(/^rec_[a-z]{2}[0-9a-z]{20}$/)
  record_id: string;

  /** One purpose; absent withdraws every purpose still granted. */
  @IsOptional()
  @IsString()
  @Length(1, 64)
  purpose?: string;

  /** Where the person withdrew from (the link that opened their records page); absent: `own_records`. */
  @IsOptional()
  @IsIn(['own_records', 'email_link', 'receipt_link'])
  channel?: 'own_records' | 'email_link' | 'receipt_link';
}

export interface InboxRecordMessage {
  record_id: string;
  application_id: string;
  flow_id: string;
  title: string;
  /** When the person gave it (a record's `captured_at`, a hosted consent's completion): the page lists by it, newest first. */
  captured_at: string;
  /** When the service recorded it (later than `captured_at` for imported history). */
  recorded_at: string;
  channel: string;
  /** How it is withdrawn: purpose by purpose or all at once (every record, also a consent given on the hosted pages); `whole` (all at once only) is not given any more, and a page still renders it. */
  withdrawal: 'per_purpose' | 'whole';
  /** The person's newer record of the same flow that replaced this one (withdraw there). */
  superseded_by?: string;
  /** On a replaced record: the purposes still given through it, which no newer record of the flow holds (a newer flow version dropped them), withdrawn here. */
  withdrawable?: string[];
  purposes: Record<string, { label: string; status: 'granted' | 'declined' | 'withdrawn' | 'expired' | 'objected' | 'noticed' }>;
}

export interface InboxWithdrawReply {
  record_id: string;
  withdrawn: string[];
  withdrawn_at: string;
  record: InboxRecordMessage;
}
