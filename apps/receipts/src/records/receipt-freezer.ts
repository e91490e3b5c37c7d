import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { ReceiptsEnvironment } from '@dcr/config';
import {
  ApplicationIdentityReply,
  FLOWS_GET,
  FlowMessage,
  GATEWAY_APPLICATION_IDENTITY,
  ReceiptEventInput,
  ReceiptsIngestReply,
} from '@dcr/contracts';
import { ConsentOutcome, FlowTerms, PurposeStatus, recordsPageUrl } from '@dcr/domain';
import { CollectionChannel, DecisionDeliveryMode, freezeConsentReceipt, FrozenReceiptInput, NoticeMemo, prepareReceiptValidation } from '@dcr/receipts';
import { JsonRecordset, PreparedStatement } from '@dcr/persistence';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import { firstValueFrom, timeout } from 'rxjs';
import { DataSource } from 'typeorm';
import { SUPERVISORY_AUTHORITIES } from './authorities';

const CONSENT_OUTCOME_EVENTS = new Set(['consent.granted', 'consent.denied']);

interface FrozenRow {
  recordId: string;
  applicationId: string;
  eventId: string;
  frozen: object;
}

/** A batch's receipts as one JSON document: each receipt goes in as a JSON value, not as text escaped into an array literal. */
const FROZEN_ROWS = new JsonRecordset<FrozenRow>([
  { key: 'id', read: (row) => row.recordId },
  { key: 'app', read: (row) => row.applicationId },
  { key: 'event', read: (row) => row.eventId },
  { key: 'frozen', read: (row) => row.frozen, type: 'jsonb' },
]);

const INSERT_FROZEN = new PreparedStatement(
  'receipts_insert_frozen',
  `INSERT INTO "receipts"."receipts" ("record_id", "application_id", "source_event_id", "frozen", "frozen_at")
   SELECT r."id", r."app", r."event", r."frozen", now() FROM jsonb_to_recordset($1::jsonb) AS r(${FROZEN_ROWS.columns})
   ON CONFLICT DO NOTHING RETURNING 1`,
);

/** A withdrawal or objection fact of a record's lifecycle, on its way into the batch's insert. */
interface LifecycleRow {
  id: string;
  record: string;
  at: string;
  fact: object;
}

const LIFECYCLE_ROWS = new JsonRecordset<LifecycleRow>([
  { key: 'id', read: (row) => row.id },
  { key: 'record', read: (row) => row.record },
  { key: 'at', read: (row) => row.at, type: 'timestamptz' },
  { key: 'fact', read: (row) => row.fact, type: 'jsonb' },
]);

const INSERT_LIFECYCLE_FACTS = new PreparedStatement(
  'receipts_insert_lifecycle_facts',
  `INSERT INTO "receipts"."lifecycle_facts" ("source_event_id", "record_id", "at", "fact")
   SELECT r."id", r."record", r."at", r."fact" FROM jsonb_to_recordset($1::jsonb) AS r(${LIFECYCLE_ROWS.columns})
   ON CONFLICT DO NOTHING RETURNING 1`,
);

const RPC_TIMEOUT_MS = 10_000;

/**
 * Freezes a consent record's receipt from its decision event, and records withdrawals and objections
 * as lifecycle facts. The inputs are immutable once the decision is committed (the flow version's terms, the
 * session's outcome and times), so freezing from the event a few milliseconds later gives what
 * freezing inside the commit would have; a redelivered event is recognised by its id.
 */
@Injectable()
export class ReceiptFreezer implements OnModuleInit {
  private readonly env: ReceiptsEnvironment;
  /** A flow version's terms never change: kept once fetched (bounded). */
  private readonly flowVersions = new Map<string, Promise<FlowMessage>>();
  /** The privacy notices of those terms, worked out once per flow version, locale and presented purposes. */
  private readonly notices = new NoticeMemo();
  /** An application's name may change: kept a minute, so an import's thousands of receipts ask once. */
  private readonly applications = new Map<string, { at: number; identity: Promise<ApplicationIdentityReply> }>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly clients: ServiceClients,
    @Inject(SERVICE_CONTEXT) context: ServiceContext,
  ) {
    this.env = context.env as ReceiptsEnvironment;
  }

  /** Every receipt is checked against its schema: compiled at start, not inside the first batch. */
  onModuleInit(): void {
    prepareReceiptValidation();
  }

  async ingest(events: ReceiptEventInput[]): Promise<ReceiptsIngestReply> {
    const outcomes = events.filter((event) => typeof event.data.record_id === 'string' && CONSENT_OUTCOME_EVENTS.has(event.type) && event.data.kind === 'consent');
    const frozen = await this.freezeAll(outcomes);
    const withdrawals = events.filter((event) => typeof event.data.record_id === 'string' && (event.type === 'consent.revoked' || event.type === 'consent.purpose_revoked'));
    const lifecycle = await this.withdrawAll(withdrawals);
    return { frozen, lifecycle };
  }

  /**
   * The receipts of a batch of decision events, in one insert. A redelivered event's receipt is
   * frozen again and not inserted (the record's receipt is there already: the primary key's
   * conflict), so nothing frozen is ever rewritten; redeliveries are rare, and looking each batch up
   * first cost every batch a statement and a round trip (docs/performance.md, twenty-first session).
   */
  private async freezeAll(events: ReceiptEventInput[]): Promise<number> {
    if (events.length === 0) return 0;
    const seen = new Set<string>();
    const rows: FrozenRow[] = [];
    for (const event of events) {
      const recordId = event.data.record_id as string;
      if (seen.has(recordId)) continue;
      seen.add(recordId);
      rows.push({ recordId, applicationId: event.application_id, eventId: event.id, frozen: await this.frozenReceipt(event, recordId) });
    }
    if (rows.length === 0) return 0;
    const inserted = await INSERT_FROZEN.rows(this.dataSource, [FROZEN_ROWS.document(rows)]);
    return inserted.length;
  }

  /**
   * The withdrawals and objections of a batch of events, in one insert: per event, the whole record
   * or (`consent.purpose_revoked`) each purpose it withdrew, then each legitimate-interest purpose
   * the record let stand that a newer record objects to (`objected`), with the channel the event
   * states (the person's own records, a newer record of the organisation's form); an event that
   * states none (a hosted session revoked with its session token, which the organisation holds as
   * well as the person) gets none, since the receipt omits what it cannot state truthfully. A fact's
   * id is its event's id, with `:n` for an event's second and later facts, so a redelivered event
   * adds nothing. One statement per batch: a statement per event was most of PostgreSQL's time when
   * records supersede one another (docs/performance.md, thirty-first session).
   */
  private async withdrawAll(events: ReceiptEventInput[]): Promise<number> {
    if (events.length === 0) return 0;
    const facts = events.flatMap((event) => {
      const channel = typeof event.data.channel === 'string' ? event.data.channel : undefined;
      // When it was made (a newer record's decision, a carried withdrawal's own time), else when it was recorded.
      const at = typeof event.data.withdrawn_at === 'string' && Number.isFinite(Date.parse(event.data.withdrawn_at)) ? event.data.withdrawn_at : event.occurred_at;
      // Scoped: a purpose withdrawn while others stay (consent.purpose_revoked), or the last one given withdrawn by name (consent.revoked with scope purpose).
      const scoped = event.type === 'consent.purpose_revoked' || event.data.scope === 'purpose';
      // `withdrawn` names what the event withdrew (`purposes` is each purpose's outcome since the
      // thirty-fifth session; an event queued before that names them in `purposes`).
      const named = Array.isArray(event.data.withdrawn) ? event.data.withdrawn : Array.isArray(event.data.purposes) ? event.data.purposes : undefined;
      const purposes = scoped && named ? (named as string[]) : [undefined];
      const objected = Array.isArray(event.data.objected) ? (event.data.objected as unknown[]).filter((key): key is string => typeof key === 'string') : [];
      const stated = [
        ...purposes.map((purposeId) => ({ kind: 'withdrawal', at, ...(channel ? { channel } : {}), ...(purposeId ? { purposeId } : {}) })),
        ...objected.map((purposeId) => ({ kind: 'objection', at, ...(channel ? { channel } : {}), purposeId })),
      ];
      return stated.map((fact, n) => ({ id: n === 0 ? event.id : `${event.id}:${n + 1}`, record: event.data.record_id as string, at, fact }));
    });
    if (facts.length === 0) return 0;
    const inserted = await INSERT_LIFECYCLE_FACTS.rows(this.dataSource, [LIFECYCLE_ROWS.document(facts)]);
    return inserted.length;
  }

  private flowVersion(flowId: string, version: number): Promise<FlowMessage> {
    const key = `${flowId}@${version}`;
    let known = this.flowVersions.get(key);
    if (!known) {
      known = firstValueFrom(this.clients.own.send<FlowMessage>(FLOWS_GET, { flow_id: flowId, version }).pipe(timeout(RPC_TIMEOUT_MS)));
      known.catch(() => this.flowVersions.delete(key));
      if (this.flowVersions.size > 1000) this.flowVersions.clear();
      this.flowVersions.set(key, known);
    }
    return known;
  }

  private application(applicationId: string): Promise<ApplicationIdentityReply> {
    const known = this.applications.get(applicationId);
    if (known && Date.now() - known.at < 60_000) return known.identity;
    const identity = firstValueFrom(
      this.clients.own.send<ApplicationIdentityReply>(GATEWAY_APPLICATION_IDENTITY, { application_id: applicationId }).pipe(timeout(RPC_TIMEOUT_MS)),
    );
    identity.catch(() => this.applications.delete(applicationId));
    if (this.applications.size > 1000) this.applications.clear();
    this.applications.set(applicationId, { at: Date.now(), identity });
    return identity;
  }

  private async frozenReceipt(event: ReceiptEventInput, recordId: string): Promise<ReturnType<typeof freezeConsentReceipt>> {
    const data = event.data as Record<string, any>;
    const [flow, application] = await Promise.all([this.flowVersion(data.flow_id, data.flow_version), this.application(event.application_id)]);
    const base = this.env.PUBLIC_BASE_URL;
    const input: FrozenReceiptInput = {
      recordId,
      flow: { id: flow.id, terms: flow.terms as unknown as FlowTerms },
      subject: typeof data.subject?.id === 'string' ? { id: data.subject.id } : { anonymous: true },
      decision: {
        outcome: data.outcome as ConsentOutcome,
        ...(data.purposes ? { purposeStatuses: data.purposes as Record<string, PurposeStatus> } : {}),
        ...(Array.isArray(data.presentation_stated) ? { presentationStated: data.presentation_stated as string[] } : {}),
        ...(typeof data.locale === 'string' ? { locale: data.locale } : {}),
        // Recorded through the Record API or an import: the channel it names; decided on our pages: hosted or embedded.
        channel: (typeof data.channel === 'string' ? data.channel : data.delivery_mode === 'embed' ? 'embedded' : 'hosted') as CollectionChannel,
        ...(typeof data.delivery_mode === 'string' ? { deliveryMode: data.delivery_mode as DecisionDeliveryMode } : {}),
        ...(typeof data.requested_at === 'string' ? { requestedAt: data.requested_at } : {}),
        // Decided on our pages: when the page showed the notice (the session reached the step that shows it).
        ...(typeof data.notice_shown_at === 'string' ? { noticeShownAt: data.notice_shown_at } : {}),
        decidedAt: data.captured_at ?? data.completed_at ?? event.occurred_at,
        recordedAt: data.recorded_at ?? event.occurred_at,
        ...(typeof data.supersedes === 'string' ? { supersedes: data.supersedes } : {}),
      },
      application: { id: application.id, name: application.name },
      storageCountry: this.env.COUNTRY,
      processor: {
        id: 'dcr-platform',
        name: this.env.RECEIPT_PROCESSOR_NAME ?? 'Decision, Consent and Receipt Service',
        ...(this.env.RECEIPT_PROCESSOR_URL ? { url: this.env.RECEIPT_PROCESSOR_URL } : {}),
      },
      ...(SUPERVISORY_AUTHORITIES[this.env.COUNTRY] ? { supervisoryAuthority: SUPERVISORY_AUTHORITIES[this.env.COUNTRY] } : {}),
      ...(data.wording_verdict || typeof data.collection_platform === 'string' || Array.isArray(data.rendering_evidence)
        ? {
            evidence: {
              ...(data.wording_verdict ? { wordingVerdict: data.wording_verdict as Record<string, 'match' | 'drift'> } : {}),
              // The hosted form builder that delivered a form_platform_webhook record.
              ...(typeof data.collection_platform === 'string' ? { collectionPlatform: data.collection_platform } : {}),
              // The consent field (embedded_field, embedded_field_browser): how the service rendered the controls and what the browser saw.
              ...(Array.isArray(data.rendering_evidence) ? { renderingEvidence: data.rendering_evidence as Array<Record<string, unknown>> } : {}),
            },
          }
        : {}),
      // The person withdraws from their records page (signed in with a mailed one-time code): an entry with no credential in it.
      ...(base ? { withdrawalUrl: recordsPageUrl(base, event.application_id, 'receipt') } : {}),
    };
    return freezeConsentReceipt(input, { notices: this.notices });
  }
}
