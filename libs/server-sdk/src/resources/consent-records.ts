import { ApiRequester, RequestOptions, route, WithResponse } from '../requester';
import { ListParams } from './common';

/** How a purpose's control was presented and what the person did with it (a record states both flags). */
export interface AttestedDecision {
  /** An unticked box is a decline, never silence. */
  decision: 'granted' | 'declined';
  /** Was the control shown ticked? Refused for consent purposes. */
  default_checked: boolean;
  /** Was the control mandatory? Refused for every purpose. */
  mandatory: boolean;
}

/** An import row's decision: history seldom kept the presentation, so the flags may be left out (read as false). */
export interface ImportedDecision {
  decision: 'granted' | 'declined';
  default_checked?: boolean;
  mandatory?: boolean;
}

export interface RecordSubject {
  email: string;
  /** Your own id for the person. */
  external_id?: string;
}

export interface ConsentRecordCreateParams {
  /** A capturable flow (decisions only, a consent duration); its version in force at `captured_at` applies, unless `flow_version` pins one. */
  flow_id: string;
  subject: RecordSubject;
  /** Every purpose of the flow that takes a decision, by key. */
  decisions: Record<string, AttestedDecision>;
  /** When you captured the decision, ISO 8601 UTC. */
  captured_at: string;
  /**
   * Your key for this record, kept with it: the same key and body answer the same record (200)
   * for as long as it exists; the same key with another body raises `ConflictError`. Independent
   * of the `Idempotency-Key` header the client sends, which protects retries for 24 hours.
   */
  idempotency_key?: string;
  /** SHA-256 (hex) of the notice text the person saw. */
  notice_digest?: string;
  /**
   * The activated flow version the person was shown (else the one in force at `captured_at`); a
   * `captured_at` before its activation is refused, except for the flow's first version.
   */
  flow_version?: number;
}

export type RecordedPurposeStatus = 'granted' | 'declined' | 'objected' | 'noticed';

export interface ConsentRecord {
  /** `rec_<cc>…`: the receipt's id; it names the home country. */
  record_id: string;
  status: 'granted' | 'declined';
  flow_id: string;
  flow_version: number;
  subject: { id: string };
  purposes: Record<string, { status: RecordedPurposeStatus; basis: string }>;
  captured_at: string;
  recorded_at: string;
  /** `controller_attested` for the Record API. */
  channel: string;
  /** The earlier record of the same person and flow that this one supersedes. */
  supersedes?: string;
}

export interface ConsentRecordCreated {
  consent_record: ConsentRecord;
}

/** Exactly one way to name the person: your id, their e-mail, or the service's `sub_` id. */
export type ConsentStatusSubject = { external_id: string; email?: never; id?: never } | { email: string; external_id?: never; id?: never } | { id: string; external_id?: never; email?: never };

export type PurposeStatus = 'granted' | 'declined' | 'withdrawn' | 'expired' | 'objected' | 'noticed';

export interface ConsentStatus {
  subject: { id: string };
  /** The newest record holding a purpose decides it. */
  purposes: Record<string, { status: PurposeStatus; record_id: string; /** The flow whose record decides the purpose. */ flow_id: string; updated_at: string }>;
}

/** The Record API: consent collected in your own form, checked with the capture rules, and a person's status per purpose. */
export class ConsentRecords {
  constructor(private readonly requester: ApiRequester) {}

  /**
   * `POST /api/v1/consent_records`. Refusals of the capture rules raise `InvalidRequestError` (422)
   * with one `details` row per purpose (`decisions.<key>`); a person homed in another country raises
   * `WrongCountryError`. `lastResponse.statusCode` is 201 for a new record, 200 for a repeat of `idempotency_key`.
   */
  async create(params: ConsentRecordCreateParams, options?: RequestOptions): Promise<WithResponse<ConsentRecordCreated>> {
    return this.requester.send<ConsentRecordCreated>({ method: 'POST', path: '/api/v1/consent_records', body: params }, options);
  }

  /** `GET /api/v1/applications/<id>/consent_status?subject[…]=`: the person's current status per purpose; `NotFoundError` for an unknown person. */
  async status(applicationId: string, params: { subject: ConsentStatusSubject }, options?: RequestOptions): Promise<WithResponse<ConsentStatus>> {
    return this.requester.send<ConsentStatus>(
      { method: 'GET', path: route`/api/v1/applications/${applicationId}/consent_status`, query: { subject: { ...params.subject } } },
      options,
    );
  }
}

/** One row of an import: the capture time is kept as `captured_at`, the service's as `recorded_at`. */
export interface ImportRow {
  subject: RecordSubject;
  decisions: Record<string, ImportedDecision>;
  captured_at: string;
  /** Rows with a key already used answer the earlier record. */
  idempotency_key?: string;
}

export interface ImportCreateParams {
  flow_id: string;
  /** true: check every row and write nothing. */
  dry_run: boolean;
  /** Mail each person whose row makes a new record their receipt (default false). */
  send_receipts?: boolean;
  /** 1 to 10,000 rows. */
  records: ImportRow[];
}

export interface ImportRowOutcome {
  /** 0-based position in `records`. */
  index: number;
  outcome: 'recorded' | 'refused';
  record_id?: string;
  /** Why a row was refused, by field. */
  /** At most 10; the rest are counted in `reasons_omitted`. */
  reasons?: Array<{ field: string; reason: string }>;
  reasons_omitted?: number;
  /** Recorded by an earlier request with the same idempotency key: nothing new was written. */
  replayed?: true;
  /** The flow version the row was decided against (in force at its `captured_at`). */
  flow_version?: number;
}

export interface ImportReport {
  /** `imp_…`; a dry run's report is not kept. */
  import_id: string;
  flow_id: string;
  dry_run: boolean;
  /** `in_progress` while its chunks are being recorded (or after it stopped without word); `failed` with `failure`. */
  status: 'completed' | 'in_progress' | 'failed';
  /** Where and why a `failed` import stopped (`offset`: how many rows were decided). */
  failure?: { offset: number; code: string; message: string };
  /** Every row of the report, also on a page of it. */
  summary: { recorded: number; refused: number };
  rows: ImportRowOutcome[];
  created_at: string;
}

/** A page of an import's report (`get`): the report with this page's rows, by `index`. */
export interface ImportReportPage extends ImportReport {
  /** Pass as `cursor` for the next page; null on the last one. */
  next_cursor: string | null;
}

/** Imports of historical consent records: a dry run first, then the real one. A bad row is refused by name; it does not fail the import. */
export class Imports {
  constructor(private readonly requester: ApiRequester) {}

  /**
   * `POST /api/v1/consent_records/imports`. Large imports take a while (every row goes through the
   * Record API's path): raise `timeout` for them, since a retry that arrives while the first attempt
   * is still running raises `ConflictError` (`idempotency_conflict`).
   */
  async create(params: ImportCreateParams, options?: RequestOptions): Promise<WithResponse<ImportReport>> {
    return this.requester.send<ImportReport>({ method: 'POST', path: '/api/v1/consent_records/imports', body: params }, options);
  }

  /**
   * `GET /api/v1/consent_records/imports/<import_id>`: the report again; without `limit` and
   * `cursor` whole (`next_cursor` null), with either a page of its rows at a time (`limit` 1 to 200,
   * default 50; `cursor`: the previous page's `next_cursor`), its `summary` whole on every page.
   * `rows` walks them all.
   */
  async get(importId: string, params: ListParams = {}, options?: RequestOptions): Promise<WithResponse<ImportReportPage>> {
    return this.requester.send<ImportReportPage>({ method: 'GET', path: route`/api/v1/consent_records/imports/${importId}`, query: { ...params } }, options);
  }

  /** Every row of an import's report, by `index`, page after page (`limit` rows a page): `for await (const row of client.imports.rows(id)) …`. */
  async *rows(importId: string, params: Omit<ListParams, 'cursor'> = {}, options?: RequestOptions): AsyncGenerator<ImportRowOutcome, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.get(importId, { ...params, ...(cursor !== undefined ? { cursor } : {}) }, options);
      yield* page.rows;
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }
}
