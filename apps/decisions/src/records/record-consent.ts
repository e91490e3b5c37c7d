import { Injectable } from '@nestjs/common';
import { ConsentRecordMessage, CreateConsentRecordReply, CreateConsentRecordRequest, SERVICE_RENDERED_RECORD_CHANNELS } from '@dcr/contracts';
import {
  assertCapturable,
  DomainError,
  FlowTerms,
  normaliseEmail,
  pinnedVersionIssue,
  recordAttestation,
  statedPresentations,
  validationFailed,
  versionInForce,
  wrongCountry,
} from '@dcr/domain';
import { DataSource } from 'typeorm';
import { ConsentRecord } from './consent-record.entity';
import { ReceiptMailer } from './receipt-mailer';
import { noticeDigestOf } from '../flows/flow-message';
import { FlowsRepository } from '../flows/flows.repository';
import { madeAfter, madeOrder } from './record-order';
import { RecordRequest, RecordWriter, VersionNotInForce, WrittenRow } from './record-writer';

/** How many times a record's version is chosen when newer versions keep being activated meanwhile (VersionNotInForce). */
const VERSION_CHOICES = 3;

/**
 * What a repeated idempotency key's answer needs beyond the stored record: a late record's
 * `superseded_by` as its first answer gave it (the record captured next after it among those
 * recorded before it; a record that supersedes another, or a late record captured between the two
 * and recorded later, does not change what the first answer said), and its flow version's purpose
 * keys in the terms' order, the order the first answer listed them in (recordAttestation; the stored
 * `jsonb` keeps keys in an order of its own).
 */
const REPLAYED = `SELECT
    (SELECT n."record_id" FROM "decisions"."consent_records" r
       JOIN "decisions"."consent_records" n ON ${madeAfter('n', 'r')} AND n."recorded_at" < r."recorded_at"
      WHERE r."record_id" = $1 AND r."supersedes" IS NULL
      ORDER BY ${madeOrder('n')} LIMIT 1) AS "superseded_by",
    ARRAY(SELECT e.purpose->>'key' FROM "decisions"."flow_versions" f
            CROSS JOIN LATERAL jsonb_array_elements(f."terms"->'purposes') WITH ORDINALITY AS e(purpose, n)
           WHERE f."id" = $2 AND f."version" = $3
           ORDER BY e.n) AS "purpose_order"`;

/** The answer to a repeated idempotency key: the record as its first answer described it, `superseded_by` of a late record included. */
async function replayedMessage(dataSource: DataSource, record: ConsentRecord): Promise<ConsentRecordMessage> {
  const [row]: Array<{ superseded_by: string | null; purpose_order: string[] }> = await dataSource.query(REPLAYED, [record.recordId, record.flowId, record.flowVersion]);
  const message = recordMessage(record, row.purpose_order);
  return row.superseded_by ? { ...message, superseded_by: row.superseded_by } : message;
}

/**
 * A stored record's purposes as its first answer listed them: in the order of `keys` (its flow
 * version's terms; any others after them), each as `{status, basis}` (recordAttestation).
 */
function answeredPurposes(purposes: ConsentRecord['purposes'], keys: readonly string[]): ConsentRecord['purposes'] {
  const ordered: ConsentRecord['purposes'] = {};
  for (const key of [...keys, ...Object.keys(purposes)]) {
    if (Object.hasOwn(purposes, key) && !Object.hasOwn(ordered, key)) ordered[key] = { status: purposes[key].status, basis: purposes[key].basis };
  }
  return ordered;
}

/** A stored record as the Record API answers it; `purposeOrder`: its flow version's purpose keys, in the terms' order. */
function recordMessage(record: ConsentRecord, purposeOrder: readonly string[]): ConsentRecordMessage {
  return {
    record_id: record.recordId,
    status: record.status as 'granted' | 'declined',
    flow_id: record.flowId,
    flow_version: record.flowVersion,
    subject: { id: record.subjectId },
    purposes: answeredPurposes(record.purposes, purposeOrder),
    captured_at: record.capturedAt.toISOString(),
    recorded_at: record.recordedAt.toISOString(),
    channel: record.channel,
    ...(record.supersedes ? { supersedes: record.supersedes } : {}),
  };
}

/**
 * Records a consent the organisation collected in its own form: the capture rules decide each
 * purpose (refusing by name what a capture may not attest), the person is bound in their home
 * country, and a later record of the same person and flow supersedes the earlier one, withdrawing
 * what moved away from granted. The record, its outcome event and any withdrawal event commit
 * together (with the other records arriving at the same time: RecordWriter); the outbox takes them
 * to the audit trail, the webhooks and the receipts. Idempotency keys replay the same body's record
 * and refuse another body (409), also between concurrent duplicates.
 */
/**
 * A Record API call's notice digest against the version it is recorded with (the flow's
 * `notice_digest`): every purpose's wording matched, or drifted; recorded (the receipt's
 * wording_drift), never refused.
 */
function noticeVerdict(terms: FlowTerms, matched: boolean): Record<string, 'match' | 'drift'> {
  return Object.fromEntries(terms.purposes.map((purpose) => [purpose.key, matched ? 'match' : 'drift']));
}

@Injectable()
export class RecordConsent {
  constructor(
    private readonly dataSource: DataSource,
    private readonly writer: RecordWriter,
    private readonly receipts: ReceiptMailer,
    private readonly flows: FlowsRepository,
  ) {}

  async execute(request: CreateConsentRecordRequest): Promise<CreateConsentRecordReply> {
    const capturedAt = new Date(request.captured_at);
    if (capturedAt.getTime() > Date.now() + 5 * 60_000) {
      throw validationFailed([{ field: 'captured_at', reason: 'lies in the future' }]);
    }
    const email = normaliseEmail(request.subject.email);
    const externalId = request.subject.external_id?.trim() || undefined;

    // Written with the other records arriving now, in one transaction (see RecordWriter), against
    // the version chosen for it (versionFor), chosen again if a newer one was activated meanwhile.
    const write = (version: Pick<RecordRequest, 'flowVersion' | 'inForce'>) =>
      this.writer.write({
        applicationId: request.application_id,
        flowId: request.flow_id,
        ...version,
        email,
        ...(externalId ? { externalId } : {}),
        check: (flow) => {
          const terms = flow.terms as unknown as FlowTerms;
          assertCapturable(terms);
          const wordingVerdict = request.notice_digest ? noticeVerdict(terms, request.notice_digest === noticeDigestOf(flow)) : request.wording_verdict;
          return {
            index: 0,
            email,
            ...(externalId ? { externalId } : {}),
            purposes: recordAttestation(terms, request.decisions as never),
            capturedAt: capturedAt.toISOString(),
            ...(request.idempotency_key ? { idempotencyKey: request.idempotency_key } : {}),
            fingerprint: request.request_fingerprint ?? '',
            channel: request.channel,
            ...(wordingVerdict ? { wordingVerdict } : {}),
            ...(request.collection_platform ? { collectionPlatform: request.collection_platform } : {}),
            ...(request.rendering_evidence ? { renderingEvidence: request.rendering_evidence } : {}),
            ...(SERVICE_RENDERED_RECORD_CHANNELS.includes(request.channel) ? {} : { presentationStated: request.presentation_stated ?? statedPresentations(request.decisions as never) }),
          };
        },
      });
    const chooseAndWrite = async (): Promise<WrittenRow> => {
      for (let choice = 1; ; choice++) {
        try {
          return await write(await this.versionFor(request, capturedAt.getTime(), choice > 1));
        } catch (error) {
          if (!(error instanceof VersionNotInForce) || choice >= VERSION_CHOICES) throw error;
        }
      }
    };
    const written = await chooseAndWrite().catch((error: unknown) => this.answeredBefore(request, error));
    if ('replayed' in written) return { consent_record: written.replayed, created: false };
    if (written.homeCountry) throw wrongCountry(written.homeCountry);
    const { outcome, made, flow } = written;
    if (outcome.outcome === 'refused') {
      const reasons = outcome.reasons ?? [];
      if (reasons.some((reason) => reason.field === 'idempotency_key')) {
        throw new DomainError('idempotency_conflict', 'This idempotency_key was used with a different body', reasons);
      }
      throw validationFailed(reasons);
    }
    if (written.created && made) {
      const message: ConsentRecordMessage = {
        record_id: made.recordId,
        status: made.status,
        flow_id: flow.id,
        flow_version: flow.version,
        subject: { id: made.subjectId },
        purposes: written.row.purposes,
        captured_at: capturedAt.toISOString(),
        recorded_at: made.recordedAt,
        channel: request.channel,
        ...(made.supersedes ? { supersedes: made.supersedes } : {}),
        ...(made.supersededBy ? { superseded_by: made.supersededBy } : {}),
      };
      if (request.send_receipt) this.receipts.send(email, flow.terms as unknown as FlowTerms, { ...message, application_id: request.application_id });
      return { consent_record: message, created: true };
    }
    // The same idempotency key and body as an earlier request: its record.
    const existing = await this.dataSource.manager.findOne(ConsentRecord, { where: { recordId: outcome.record_id, applicationId: request.application_id } });
    if (!existing) throw new Error(`record ${outcome.record_id} answered for a repeated idempotency key was not found`);
    return { consent_record: await replayedMessage(this.dataSource, existing), created: false };
  }

  /**
   * The version a record is written against. The Record API's (`version_rule: in_force_at_capture`):
   * the one in force at its capture time (versionInForce), or the one it pins, which must have been
   * activated, by the capture time unless it is the first (pinnedVersionIssue: a 422 naming
   * `flow_version` or `captured_at`). A record captured since the version the writer remembers as
   * active was activated (the common case: captured now) is left to the writer's active version
   * without a read; any other reads the flow's activations (remembered; `fresh` reads them again).
   * The newest of them is left to the writer's active version too, which must have been activated
   * by the capture time (or be the first): a newer one is refused there (VersionNotInForce) and the
   * choice made again afresh. Others (captures): the pinned version, else the active one. A form
   * builder's delivery pins the version in force at its `submitted_at`, which it was read with.
   */
  private async versionFor(request: CreateConsentRecordRequest, capturedAt: number, fresh: boolean): Promise<Pick<RecordRequest, 'flowVersion' | 'inForce'>> {
    if (request.version_rule !== 'in_force_at_capture') return request.flow_version ? { flowVersion: request.flow_version } : {};
    if (request.flow_version === undefined && !fresh) {
      const activatedAt = this.flows.rememberedForRecords(request.flow_id)?.activatedAt;
      if (activatedAt && new Date(activatedAt).getTime() <= capturedAt) return { inForce: { at: capturedAt } };
    }
    let known = await this.flows.activations(request.flow_id, { fresh });
    // A pinned version activated since the activations were remembered (here, or replicated) is looked for afresh.
    if (!fresh && request.flow_version !== undefined && !known?.activations.some((activation) => activation.version === request.flow_version)) {
      known = await this.flows.activations(request.flow_id, { fresh: true });
    }
    if (!known || known.applicationId !== request.application_id) throw validationFailed([{ field: 'flow_id', reason: 'no active flow with this id in this application' }]);
    if (request.flow_version !== undefined) {
      const issue = pinnedVersionIssue(known.activations, request.flow_version, capturedAt);
      if (issue) throw validationFailed([issue]);
      return { flowVersion: request.flow_version };
    }
    const version = versionInForce(known.activations, capturedAt);
    if (version === known.activations[known.activations.length - 1].version) return { inForce: { at: capturedAt, first: known.activations[0].version } };
    return { flowVersion: version };
  }

  /**
   * A request refused before its idempotency key was looked up (the capture rules against the flow
   * version active now, the flow no longer active or capturable): when the key was used before, the
   * contract's answer wins, as it would have had the rules not changed since. The same body answers
   * the earlier record; another body is a conflict (409). Else the refusal stands. Also for a form
   * builder's redelivery refused before it reached here (its mapping read against the flow now).
   */
  async answeredBefore(
    request: Pick<CreateConsentRecordRequest, 'application_id' | 'idempotency_key' | 'request_fingerprint'>,
    error: unknown,
  ): Promise<{ replayed: ConsentRecordMessage }> {
    if (!request.idempotency_key || !(error instanceof DomainError) || error.code !== 'validation_failed') throw error;
    const earlier = await this.dataSource.manager.findOne(ConsentRecord, { where: { applicationId: request.application_id, idempotencyKey: request.idempotency_key } });
    if (!earlier) throw error;
    if (earlier.requestFingerprint !== (request.request_fingerprint ?? '')) {
      throw new DomainError('idempotency_conflict', 'This idempotency_key was used with a different body', [
        { field: 'idempotency_key', reason: `used before with a different body (record ${earlier.recordId})` },
      ]);
    }
    return { replayed: await replayedMessage(this.dataSource, earlier) };
  }
}
