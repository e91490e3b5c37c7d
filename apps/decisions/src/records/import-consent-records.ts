import { Injectable } from '@nestjs/common';
import { DryRunLedger, ImportChunkReply, ImportFailedRequest, ImportFailure, ImportGetRequest, ImportListReply, ImportListRequest, ImportRecordsRequest, ImportReport, ImportReportPage, ImportRowInput, ImportRowOutcome, refusedImportRow } from '@dcr/contracts';
import { assertCapturable, emailProblem, externalIdProblem, importReportPage, importReportSnapshot, normaliseEmail, normaliseExternalId, DomainError, FieldIssue, FlowTerms, isZonedDateTime, notFound, recordAttestation, recordRequestFingerprint, statedPresentations, versionInForce } from '@dcr/domain';
import { isEmail } from 'class-validator';
import { leadingWithin } from '@dcr/service-kit';
import { DataSource } from 'typeorm';
import { FlowVersion } from '../flows/flow-version.entity';
import { FlowsRepository } from '../flows/flows.repository';
import { BatchFlow, CheckedRow, ImportBatch } from './import-batch';
import { ReceiptMailer } from './receipt-mailer';

/** The fields of an import row and of its subject: any other is one the caller believes was recorded, so it is refused by name. */
const ROW_FIELDS = ['subject', 'decisions', 'captured_at', 'idempotency_key'];
const SUBJECT_FIELDS = ['email', 'external_id'];

const UNIQUE_VIOLATION = '23505';
/** How many times a chunk is recorded when another writer keeps committing its idempotency keys first. */
const KEY_RACE_TRIES = 3;

/**
 * Imports historical consent records: every row goes through the same capture rules as the Record
 * API and is recorded with channel `imported`, its original `captured_at` and the service's
 * `recorded_at`, a chunk in one transaction (ImportBatch); a bad row is refused by name and never
 * takes the others with it. A dry run checks every row as the import would (capture rules,
 * idempotency keys, identifiers, residency: ImportBatch.preview) and writes nothing (not even its
 * report). The gateway
 * sends an import in chunks under one id; each chunk appends its outcomes to the report.
 */
@Injectable()
export class ImportConsentRecords {
  constructor(
    private readonly dataSource: DataSource,
    private readonly flows: FlowsRepository,
    private readonly batch: ImportBatch,
    private readonly receipts: ReceiptMailer,
  ) {}

  /**
   * One chunk: its rows checked (and, unless a dry run, recorded), its outcomes added to the import's
   * report. Each row is decided against the flow version in force at its captured_at, one version
   * per chunk (one transaction): the chunk's rows come in captured_at order, and when they reach a
   * time in force under a later version, only those before it are decided (`decided`); the gateway
   * sends the others again in its next chunk.
   */
  async execute(request: ImportRecordsRequest): Promise<ImportChunkReply> {
    const { versions, newest } = await this.importVersions(request);
    const activations = versions.map((version) => ({ version: version.version, activatedAt: new Date(version.activatedAt ?? version.createdAt).getTime() }));
    // A row without a valid capture time (refused for it) is checked against the first version.
    const inForce = request.records.map((row) => (isZonedDateTime(row.captured_at) ? versionInForce(activations, Date.parse(row.captured_at))! : versions[0].version));
    const chunkVersion = inForce[0] ?? versions[0].version;
    let decided = Math.min(1, request.records.length);
    while (decided < request.records.length && inForce[decided] === chunkVersion) decided++;
    const flow = versions.find((version) => version.version === chunkVersion)!;
    const terms = flow.terms as unknown as FlowTerms;
    assertCapturable(terms);
    const checked = request.records.slice(0, decided).map((row, i) => this.check(request, terms, request.indexes?.[i] ?? request.offset + i, row));
    const passing = checked.filter((row): row is CheckedRow => !('outcome' in row));
    let recorded: ImportRowOutcome[];
    let ledger: DryRunLedger | undefined;
    if (request.dry_run) {
      // What the real import would answer, short of writing: keys, identifiers, residency (ImportBatch.preview),
      // also against what the run's earlier chunks would have written.
      ({ outcomes: recorded, ledger } = passing.length === 0 ? { outcomes: [], ledger: undefined } : await this.batch.preview(request.application_id, passing, request.earlier));
    } else {
      const batch = await this.recordWhileKeysRace(request.application_id, { id: flow.id, version: flow.version, consentDuration: terms.consent_duration }, passing);
      recorded = batch.outcomes;
      // Imports mail receipts only when asked, and only for records they made (not for repeats).
      if (request.send_receipts) {
        const byIndex = new Map(batch.outcomes.map((row) => [row.index, row]));
        for (const row of passing) {
          if (batch.created.has(row.index)) this.receipts.send(row.email, terms, { record_id: byIndex.get(row.index)!.record_id!, application_id: request.application_id, purposes: row.purposes });
        }
      }
    }
    const byIndex = new Map(recorded.map((row) => [row.index, row]));
    const rows = checked.map((row) => ({ ...('outcome' in row ? row : byIndex.get(row.index)!), flow_version: flow.version }));
    let createdAt: string | undefined;
    if (!request.dry_run) {
      const recorded = rows.filter((row) => row.outcome === 'recorded').length;
      // In progress until the last chunk is recorded (the gateway says which), so a report read while
      // an import runs, or after it stopped without word, does not claim to be complete. Its
      // created_at (the first chunk's) goes back with every chunk, for the import's answer.
      const [report]: Array<{ created_at: Date }> = await this.dataSource.query(
        `INSERT INTO "decisions"."consent_imports" ("id", "application_id", "flow_id", "summary", "rows", "status", "created_at")
         VALUES ($1, $2, $3, jsonb_build_object('recorded', $4::int, 'refused', $5::int), $6::jsonb, $7, now())
         ON CONFLICT ("id") DO UPDATE SET
           "rows" = "consent_imports"."rows" || EXCLUDED."rows",
           "summary" = jsonb_build_object(
             'recorded', ("consent_imports"."summary"->>'recorded')::int + $4::int,
             'refused', ("consent_imports"."summary"->>'refused')::int + $5::int),
           "status" = EXCLUDED."status"
         WHERE "consent_imports"."application_id" = EXCLUDED."application_id"
         RETURNING "created_at"`,
        [request.import_id, request.application_id, request.flow_id, recorded, rows.length - recorded, JSON.stringify(rows), request.last === false || decided < request.records.length ? 'in_progress' : 'completed'],
      );
      if (report) createdAt = new Date(report.created_at).toISOString();
    }
    return {
      rows,
      ...(decided < request.records.length ? { decided } : {}),
      flow_version: newest,
      purposes: Math.max(...versions.map((version) => (version.terms as unknown as FlowTerms).purposes.length)),
      ...(ledger ? { ledger } : {}),
      ...(createdAt ? { created_at: createdAt } : {}),
    };
  }

  /**
   * The versions an import's rows are decided against: the flow's activated ones up to the one
   * active when its first chunk was decided (ImportRecordsRequest.flow_version on the later chunks),
   * so that a version activated while an import runs does not change it, oldest first.
   */
  private async importVersions(request: ImportRecordsRequest): Promise<{ versions: FlowVersion[]; newest: number }> {
    const activated = await this.flows.activatedVersions(request.flow_id);
    const newest = request.flow_version ?? activated.find((version) => version.status === 'active')?.version;
    const versions = activated.filter((version) => newest !== undefined && version.version <= newest);
    if (newest === undefined || versions.length === 0 || versions[0].applicationId !== request.application_id) {
      throw new DomainError('validation_failed', 'The request did not pass validation', [{ field: 'flow_id', reason: 'no active flow with this id in this application' }]);
    }
    return { versions, newest };
  }

  /**
   * The chunk recorded (ImportBatch.record, one transaction). When another writer (a concurrent
   * import, a Record API call) committed one of its idempotency keys between the chunk's read of
   * the keys used before and its insert, the insert broke UQ_consent_records_idempotency and wrote
   * nothing: the chunk is recorded again, and finds that key used before (its record for the same
   * body, a refusal for another), as the rows sent after that writer would.
   */
  private async recordWhileKeysRace(applicationId: string, flow: BatchFlow, rows: CheckedRow[]): ReturnType<ImportBatch['record']> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.batch.record(applicationId, flow, rows);
      } catch (error) {
        const { code, constraint } = error as { code?: string; constraint?: string };
        if (attempt >= KEY_RACE_TRIES || code !== UNIQUE_VIOLATION || constraint !== 'UQ_consent_records_idempotency') throw error;
      }
    }
  }

  /**
   * A chunk failed after earlier ones were recorded (the gateway says so): the report says where
   * and why, and keeps the rows decided before it. Nothing is written for an import with no report
   * (its first chunk failed: nothing of it was recorded).
   */
  async failed(request: ImportFailedRequest): Promise<{ failed: boolean }> {
    const rows: unknown[] = await this.dataSource.query(
      `UPDATE "decisions"."consent_imports" SET "status" = 'failed', "failure" = $3::jsonb WHERE "id" = $1 AND "application_id" = $2 RETURNING "id"`,
      [request.import_id, request.application_id, JSON.stringify(request.failure)],
    );
    return { failed: rows.length > 0 };
  }

  /**
   * A page of an import's report: its head and whole summary as they stand, and the rows of the
   * walk after the request's position by index, at most `limit` of them and as many as fit one
   * message on the bus (a report of 10,000 rows refused for the purposes of a large flow is
   * megabytes), with the position of the next page while rows are left. The walk covers the rows
   * the report held at its first page (importReportSnapshot): each chunk appends its rows, in
   * captured_at order, so those never change and a walk lists each once, also while the import
   * still adds rows. Only the page's rows leave the database.
   */
  /** The application's imports kept here, newest first (`created_at`, then id), after `request.after`. */
  async list(request: ImportListRequest): Promise<ImportListReply> {
    const after = request.after;
    if (after && (after.length !== 2 || Number.isNaN(Date.parse(after[0])))) {
      throw new DomainError('invalid_request', 'The cursor does not belong to this list', [{ field: 'cursor', reason: 'not a cursor of this list' }]);
    }
    // The position keeps the microseconds PostgreSQL does (a Date would drop them, and the next page repeat or skip an import).
    const rows: Array<{ id: string; flow_id: string; summary: ImportReport['summary']; status: ImportReport['status']; failure: ImportFailure | null; created_at: Date; at: string; held: number }> =
      await this.dataSource.query(
        `SELECT "id", "flow_id", "summary", "status", "failure", "created_at", to_char("created_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "at",
                jsonb_array_length("rows") AS "held"
           FROM "decisions"."consent_imports"
          WHERE "application_id" = $1 ${after ? `AND ("created_at", "id") < ($3::timestamptz, $4)` : ''}
          ORDER BY "created_at" DESC, "id" DESC
          LIMIT $2`,
        after ? [request.application_id, request.limit + 1, after[0], after[1]] : [request.application_id, request.limit + 1],
      );
    const page = rows.slice(0, request.limit);
    const last = page[page.length - 1];
    return {
      data: page.map((row) => ({
        import_id: row.id,
        flow_id: row.flow_id,
        status: row.status,
        ...(row.failure ? { failure: row.failure } : {}),
        summary: { recorded: row.summary.recorded, refused: row.summary.refused },
        rows_reported: Number(row.held),
        created_at: row.created_at.toISOString(),
      })),
      ...(rows.length > request.limit && last ? { next: [last.at, last.id] as [string, string] } : {}),
    };
  }

  async get(request: ImportGetRequest): Promise<ImportReportPage> {
    const [found]: Array<{ flow_id: string; summary: ImportReport['summary']; status: ImportReport['status']; failure: ImportFailure | null; created_at: Date; held: number }> = await this.dataSource.query(
      `SELECT "flow_id", "summary", "status", "failure", "created_at", jsonb_array_length("rows") AS "held"
         FROM "decisions"."consent_imports" WHERE "id" = $1 AND "application_id" = $2`,
      [request.import_id, request.application_id],
    );
    if (!found) throw notFound('Import');
    const walk = importReportSnapshot(request.position, found.held);
    // The walk's rows after its position, by index: one more than the page, to tell whether more follow.
    const following: Array<{ row: ImportRowOutcome }> = await this.dataSource.query(
      `SELECT "listed"."row"
         FROM "decisions"."consent_imports" AS "report",
              jsonb_array_elements("report"."rows") WITH ORDINALITY AS "listed"("row", "position")
        WHERE "report"."id" = $1 AND "report"."application_id" = $2
          AND "listed"."position" <= $3 AND ("listed"."row"->>'index')::int > $4
        ORDER BY ("listed"."row"->>'index')::int
        LIMIT $5`,
      [request.import_id, request.application_id, walk.of, walk.after, request.limit + 1],
    );
    const page = importReportPage(
      following.map(({ row }) => row),
      request.limit,
      walk.of,
      (rows) => leadingWithin(rows),
    );
    return {
      import_id: request.import_id,
      flow_id: found.flow_id,
      dry_run: false,
      status: found.status,
      ...(found.failure ? { failure: found.failure } : {}),
      // In the import's answer's order (the stored jsonb keeps keys in an order of its own).
      summary: { recorded: found.summary.recorded, refused: found.summary.refused },
      rows: page.rows,
      created_at: new Date(found.created_at).toISOString(),
      ...(page.next ? { next: page.next } : {}),
    };
  }

  /** The capture rules and the row's own fields; a refusal names every problem of the row. */
  private check(request: ImportRecordsRequest, terms: FlowTerms, index: number, row: ImportRowInput): CheckedRow | ImportRowOutcome {
    const issues: FieldIssue[] = [];
    for (const field of Object.keys(row)) if (!ROW_FIELDS.includes(field)) issues.push({ field, reason: `is not a field of an import row (${ROW_FIELDS.join(', ')})` });
    if (typeof row.subject === 'object' && row.subject !== null) {
      for (const field of Object.keys(row.subject)) if (!SUBJECT_FIELDS.includes(field)) issues.push({ field: `subject.${field}`, reason: `is not a field of subject (${SUBJECT_FIELDS.join(', ')})` });
    }
    const email = row.subject?.email;
    // The Record API's rule (and consent_status's), so that an imported person can be named by their
    // address: as sent, spaces around it refused (not trimmed into an address the row did not give).
    // The Record API's rule (emailProblem, with its shape check), so a row is refused in the same words as the record sent alone.
    const emailRefusal = emailProblem(email, (value) => isEmail(value));
    if (emailRefusal) issues.push({ field: 'subject.email', reason: emailRefusal });
    // The Record API's rule (externalIdProblem), so a row is taken or refused as the same record sent alone would be.
    const givenExternalId: unknown = row.subject?.external_id;
    const externalIdRefusal = givenExternalId === undefined ? undefined : externalIdProblem(givenExternalId);
    if (externalIdRefusal) issues.push({ field: 'subject.external_id', reason: externalIdRefusal });
    const externalId = typeof givenExternalId === 'string' && !externalIdRefusal ? normaliseExternalId(givenExternalId) : undefined;
    // As the Record API takes it: with its zone, `Z` or an offset (stored in UTC).
    if (!isZonedDateTime(row.captured_at)) {
      issues.push({ field: 'captured_at', reason: 'must be a date and time with its zone (2026-11-20T10:00:00Z, or an offset)' });
    } else if (Date.parse(row.captured_at) > Date.now() + 5 * 60_000) {
      issues.push({ field: 'captured_at', reason: 'lies in the future' });
    }
    if (row.idempotency_key !== undefined && (typeof row.idempotency_key !== 'string' || row.idempotency_key.length === 0 || row.idempotency_key.length > 200)) {
      issues.push({ field: 'idempotency_key', reason: 'must be 1 to 200 characters' });
    }
    let purposes: CheckedRow['purposes'] = {};
    try {
      purposes = recordAttestation(terms, row.decisions as never, 'optional');
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      issues.push(...(error.details ?? [{ field: 'decisions', reason: error.message }]));
    }
    if (issues.length > 0) return refusedImportRow(index, issues);
    return {
      index,
      // The same normalisation as the Record API, so both find the same person.
      email: normaliseEmail(email as string),
      ...(typeof externalId === 'string' ? { externalId } : {}),
      purposes,
      capturedAt: new Date(row.captured_at).toISOString(),
      ...(row.idempotency_key ? { idempotencyKey: row.idempotency_key } : {}),
      // Compared (and stored) only for a row with an idempotency key.
      fingerprint: row.idempotency_key ? recordRequestFingerprint({ flow_id: request.flow_id, ...row }) : '',
      // A row may leave the flags out (read as false): only what it stated was attested.
      presentationStated: statedPresentations(row.decisions as never),
    };
  }
}
