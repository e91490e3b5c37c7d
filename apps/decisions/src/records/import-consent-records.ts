import { Injectable } from '@nestjs/common';
import { ImportChunkReply, ImportGetRequest, ImportRecordsRequest, ImportReport, ImportRowInput, ImportRowOutcome } from '@dcr/contracts';
import { assertCapturable, DomainError, FieldIssue, FlowTerms, notFound, recordAttestation, recordRequestFingerprint } from '@dcr/domain';
import { DataSource } from 'typeorm';
import { FlowsRepository } from '../flows/flows.repository';
import { ConsentImport } from './consent-import.entity';
import { RecordConsent } from './record-consent';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const UTC_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
/** Rows recorded at once (more than the pool holds just wait): each is its own transaction, so a bad row never takes others with it. */
const CONCURRENCY = 4;

/**
 * Imports historical consent records: every row goes through the same capture rules and record path
 * as the Record API, with channel `imported`, its original `captured_at` and the service's
 * `recorded_at`. A dry run checks every row and writes nothing (not even its report). The gateway
 * sends an import in chunks under one id; each chunk appends its outcomes to the report.
 */
@Injectable()
export class ImportConsentRecords {
  constructor(
    private readonly dataSource: DataSource,
    private readonly flows: FlowsRepository,
    private readonly recordConsent: RecordConsent,
  ) {}

  /** One chunk: its rows checked (and, unless a dry run, recorded), its outcomes added to the import's report. */
  async execute(request: ImportRecordsRequest): Promise<ImportChunkReply> {
    const flow = await this.flows.active(request.flow_id);
    if (!flow || flow.applicationId !== request.application_id) {
      throw new DomainError('validation_failed', 'The request did not pass validation', [{ field: 'flow_id', reason: 'no active flow with this id in this application' }]);
    }
    const terms = flow.terms as unknown as FlowTerms;
    assertCapturable(terms);
    const rows: ImportRowOutcome[] = new Array(request.records.length);
    let next = 0;
    const worker = async () => {
      while (next < request.records.length) {
        const index = next++;
        rows[index] = await this.row(request, terms, request.offset + index, request.records[index]);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, request.records.length) }, worker));
    if (!request.dry_run) {
      const recorded = rows.filter((row) => row.outcome === 'recorded').length;
      await this.dataSource.query(
        `INSERT INTO "decisions"."consent_imports" ("id", "application_id", "flow_id", "summary", "rows", "created_at")
         VALUES ($1, $2, $3, jsonb_build_object('recorded', $4::int, 'refused', $5::int), $6::jsonb, now())
         ON CONFLICT ("id") DO UPDATE SET
           "rows" = "consent_imports"."rows" || EXCLUDED."rows",
           "summary" = jsonb_build_object(
             'recorded', ("consent_imports"."summary"->>'recorded')::int + $4::int,
             'refused', ("consent_imports"."summary"->>'refused')::int + $5::int)
         WHERE "consent_imports"."application_id" = EXCLUDED."application_id"`,
        [request.import_id, request.application_id, request.flow_id, recorded, rows.length - recorded, JSON.stringify(rows)],
      );
    }
    return { rows };
  }

  async get(request: ImportGetRequest): Promise<ImportReport> {
    const found = await this.dataSource.manager.findOne(ConsentImport, { where: { id: request.import_id, applicationId: request.application_id } });
    if (!found) throw notFound('Import');
    const rows = (found.rows as unknown as ImportRowOutcome[]).sort((a, b) => a.index - b.index);
    return {
      import_id: found.id,
      flow_id: found.flowId,
      dry_run: false,
      status: 'completed',
      summary: found.summary,
      rows,
      created_at: found.createdAt.toISOString(),
    };
  }

  private async row(request: ImportRecordsRequest, terms: FlowTerms, index: number, row: ImportRowInput): Promise<ImportRowOutcome> {
    const issues: FieldIssue[] = [];
    const email = row.subject?.email;
    if (typeof email !== 'string' || !EMAIL.test(email)) issues.push({ field: 'subject.email', reason: 'must be an e-mail address' });
    const externalId = row.subject?.external_id;
    if (externalId !== undefined && (typeof externalId !== 'string' || externalId.length === 0 || externalId.length > 200)) {
      issues.push({ field: 'subject.external_id', reason: 'must be 1 to 200 characters' });
    }
    if (typeof row.captured_at !== 'string' || !UTC_TIME.test(row.captured_at) || Number.isNaN(Date.parse(row.captured_at))) {
      issues.push({ field: 'captured_at', reason: 'must be an ISO 8601 UTC time' });
    }
    try {
      recordAttestation(terms, row.decisions as never);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      issues.push(...(error.details ?? [{ field: 'decisions', reason: error.message }]));
    }
    if (issues.length > 0) return { index, outcome: 'refused', reasons: issues };
    if (request.dry_run) return { index, outcome: 'recorded' };
    try {
      const { consent_record } = await this.recordConsent.execute({
        application_id: request.application_id,
        flow_id: request.flow_id,
        subject: { email: email as string, ...(typeof externalId === 'string' ? { external_id: externalId } : {}) },
        decisions: row.decisions,
        captured_at: row.captured_at,
        idempotency_key: row.idempotency_key,
        channel: 'imported',
        request_fingerprint: recordRequestFingerprint({ flow_id: request.flow_id, ...row }),
        send_receipt: request.send_receipts,
      });
      return { index, outcome: 'recorded', record_id: consent_record.record_id };
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      const home = error.extra?.home_country;
      const reasons = home
        ? [{ field: 'subject', reason: `the person's home country is ${String(home)}; import them there` }]
        : (error.details ?? [{ field: 'record', reason: error.message }]);
      return { index, outcome: 'refused', reasons };
    }
  }
}
