import { Inject, Injectable } from '@nestjs/common';
import { ConsentRecordMessage, CreateConsentRecordReply, CreateConsentRecordRequest } from '@dcr/contracts';
import {
  assertCapturable,
  DomainError,
  FlowTerms,
  newRecordId,
  recordAttestation,
  recordStatus,
  supersessionOf,
  validationFailed,
} from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { DataSource, EntityManager } from 'typeorm';
import { FlowsRepository } from '../flows/flows.repository';
import { OutboxRelay, recordEvent } from '../outbox/outbox';
import { SubjectsService } from '../subjects/subjects.service';
import { ConsentRecord } from './consent-record.entity';
import { ReceiptMailer } from './receipt-mailer';

export function recordMessage(record: ConsentRecord): ConsentRecordMessage {
  return {
    record_id: record.recordId,
    status: record.status as 'granted' | 'declined',
    flow_id: record.flowId,
    flow_version: record.flowVersion,
    subject: { id: record.subjectId },
    purposes: record.purposes,
    captured_at: record.capturedAt.toISOString(),
    recorded_at: record.recordedAt.toISOString(),
    channel: record.channel,
    ...(record.supersedes ? { supersedes: record.supersedes } : {}),
  };
}

const UNIQUE_VIOLATION = '23505';

/**
 * Records a consent the organisation collected in its own form: the capture rules decide each
 * purpose (refusing by name what a capture may not attest), the person is bound in their home
 * country, and a later record of the same person and flow supersedes the earlier one, withdrawing
 * what moved away from granted. The record, its outcome event and any withdrawal event commit
 * together; the outbox takes them to the audit trail, the webhooks and the receipts.
 */
@Injectable()
export class RecordConsent {
  constructor(
    private readonly dataSource: DataSource,
    private readonly flows: FlowsRepository,
    private readonly subjects: SubjectsService,
    private readonly relay: OutboxRelay,
    private readonly receipts: ReceiptMailer,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  async execute(request: CreateConsentRecordRequest): Promise<CreateConsentRecordReply> {
    const flow = request.flow_version ? await this.flows.version(request.flow_id, request.flow_version) : await this.flows.active(request.flow_id);
    if (!flow || flow.applicationId !== request.application_id) {
      throw validationFailed([{ field: 'flow_id', reason: 'no active flow with this id in this application' }]);
    }
    const terms = flow.terms as unknown as FlowTerms;
    assertCapturable(terms);
    const purposes = recordAttestation(terms, request.decisions as never);
    const capturedAt = new Date(request.captured_at);
    const recordedAt = new Date();
    if (capturedAt.getTime() > recordedAt.getTime() + 5 * 60_000) {
      throw validationFailed([{ field: 'captured_at', reason: 'lies in the future' }]);
    }

    if (request.idempotency_key) {
      const replay = await this.replayOf(request);
      if (replay) return replay;
    }
    try {
      const reply = await this.dataSource.transaction(async (manager) => {
        const { subject } = await this.subjects.create(
          { application_id: request.application_id, email: request.subject.email, external_id: request.subject.external_id },
          manager,
        );
        // One writer per person and flow at a time, so two records cannot both supersede the same one.
        await manager.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`records:${subject.id}:${flow.id}`]);
        const previous = await this.latest(manager, subject.id, flow.id);
        const record = Object.assign(new ConsentRecord(), {
          recordId: newRecordId(this.context.env.COUNTRY),
          applicationId: request.application_id,
          flowId: flow.id,
          flowVersion: flow.version,
          subjectId: subject.id,
          purposes,
          status: recordStatus(purposes),
          channel: request.channel,
          capturedAt,
          recordedAt,
          idempotencyKey: request.idempotency_key ?? null,
          requestFingerprint: request.idempotency_key ? request.request_fingerprint : null,
          supersedes: previous?.recordId ?? null,
          withdrawals: [],
        });
        await manager.insert(ConsentRecord, record);
        await this.recordEvents(manager, record, previous, request.wording_verdict);
        return { consent_record: recordMessage(record), created: true };
      });
      this.relay.kick();
      if (request.send_receipt) this.receipts.send(request.subject.email, terms, reply.consent_record);
      return reply;
    } catch (error) {
      // A concurrent duplicate with the same key won the insert: answer what it recorded.
      if ((error as { code?: string }).code === UNIQUE_VIOLATION && request.idempotency_key) {
        const replay = await this.replayOf(request);
        if (replay) return replay;
      }
      throw error;
    }
  }

  private async replayOf(request: CreateConsentRecordRequest): Promise<CreateConsentRecordReply | null> {
    const existing = await this.dataSource.manager.findOne(ConsentRecord, {
      where: { applicationId: request.application_id, idempotencyKey: request.idempotency_key },
    });
    if (!existing) return null;
    if (existing.requestFingerprint !== request.request_fingerprint) {
      throw new DomainError('idempotency_conflict', 'This idempotency_key was used with a different body', [
        { field: 'idempotency_key', reason: 'already used with a different body' },
      ]);
    }
    return { consent_record: recordMessage(existing), created: false };
  }

  private latest(manager: EntityManager, subjectId: string, flowId: string): Promise<ConsentRecord | null> {
    return manager.findOne(ConsentRecord, { where: { subjectId, flowId }, order: { recordedAt: 'DESC', recordId: 'DESC' } });
  }

  private async recordEvents(
    manager: EntityManager,
    record: ConsentRecord,
    previous: ConsentRecord | null,
    wordingVerdict?: Record<string, 'match' | 'drift'>,
  ): Promise<void> {
    const statuses = Object.fromEntries(Object.entries(record.purposes).map(([key, value]) => [key, value.status]));
    await recordEvent(manager, {
      type: record.status === 'granted' ? 'consent.granted' : 'consent.denied',
      applicationId: record.applicationId,
      occurredAt: record.recordedAt,
      data: {
        record_id: record.recordId,
        kind: 'consent',
        outcome: record.status === 'granted' ? 'granted' : 'declined',
        flow_id: record.flowId,
        flow_version: record.flowVersion,
        subject: { id: record.subjectId },
        purposes: statuses,
        channel: record.channel,
        captured_at: record.capturedAt.toISOString(),
        recorded_at: record.recordedAt.toISOString(),
        ...(record.supersedes ? { supersedes: record.supersedes } : {}),
        ...(wordingVerdict ? { wording_verdict: wordingVerdict } : {}),
      },
    });
    if (!previous) return;
    const change = supersessionOf(previous.purposes, record.purposes);
    if (!change.event || change.withdrawn.length === 0) return;
    const at = record.recordedAt.toISOString();
    const withdrawals = change.event === 'consent.revoked' ? [{ at, channel: 'newer_record' }] : change.withdrawn.map((purpose) => ({ purpose, at, channel: 'newer_record' }));
    await manager.query(`UPDATE "decisions"."consent_records" SET "withdrawals" = "withdrawals" || $2::jsonb WHERE "record_id" = $1`, [
      previous.recordId,
      JSON.stringify(withdrawals),
    ]);
    await recordEvent(manager, {
      type: change.event,
      applicationId: record.applicationId,
      occurredAt: record.recordedAt,
      data: {
        record_id: previous.recordId,
        superseded_by: record.recordId,
        flow_id: record.flowId,
        subject: { id: record.subjectId },
        purposes: change.withdrawn,
        channel: 'newer_record',
      },
    });
  }
}
