import { RECORD_CHANNELS } from '@dcr/contracts';
import { PERSON_WITHDRAWAL_CHANNELS, SUPERSEDED_BY_NEWER_RECORD, WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT } from '@dcr/domain';
import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * The OpenAPI 3.1 `webhooks` map: the signed POST the service sends to a subscription's URL, one
 * entry per event type (those a subscription may name, and `webhook.test`), each with the envelope
 * `{event, id, created_at, application_id, data}` and the `data` its producers write
 * (apps/decisions: sessions/completion.ts, sessions/session-events.ts, records/import-batch.ts,
 * records/person-records.ts, flows/flows.service.ts; apps/webhooks: deliveries/delivery-queue.ts).
 * `data` may gain fields: every schema of it allows more than it lists. docs/webhooks.md says the same in words.
 */

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const string = (description: string, extra: Schema = {}): Schema => ({ type: 'string', description, ...extra });
const dateTime = (description: string): Schema => string(description, { format: 'date-time' });
const strings = (description: string): Schema => ({ type: 'array', items: { type: 'string' }, description });
const outcomes = (values: string[], description: string): Schema => ({
  type: 'object',
  additionalProperties: { type: 'string', enum: values },
  description,
});

const WITHDRAWAL_CHANNELS = [...PERSON_WITHDRAWAL_CHANNELS, SUPERSEDED_BY_NEWER_RECORD];

const ACTOR: Schema = {
  type: 'object',
  required: ['type'],
  additionalProperties: true,
  description: 'Who wrote it: `{"type":"application"}` for the organisation, `{"type":"participant","id":"sub_…"}` for the person.',
  properties: { type: { type: 'string', enum: ['application', 'participant'] }, id: string('The person (`sub_…`), for a participant') },
};

const SUBJECT: Schema = {
  type: 'object',
  required: ['id'],
  additionalProperties: true,
  properties: { id: string('The person (`sub_…`)') },
};

/** A session's person: null when the session named none (its outcome, its revocation and the exchange's claims alike). */
const SESSION_SUBJECT: Schema = { oneOf: [SUBJECT, { type: 'null' }], description: 'The person, or null when the session named none' };

const SCOPE: Schema = {
  type: 'string',
  enum: ['purpose'],
  description: 'On `consent.revoked` only: the withdrawal was purpose by purpose (a noticed legitimate-interest purpose stands or is objected to, or the person named the last purpose still given); absent when the whole record was withdrawn.',
};

/** What a hosted session's outcome event (`consent.granted`/`consent.denied`, `approval.*`) carries. */
const sessionOutcome = (kind: 'consent' | 'approval', outcomesOf: string[]): Schema => ({
  type: 'object',
  additionalProperties: true,
  required: ['session_id', 'record_id', 'kind', 'outcome', 'flow_id', 'flow_version', 'subject', 'requested_at', 'completed_at', 'delivery_mode', 'locale'],
  description:
    'A hosted decision session ended. Matched to the session by `session_id` (the create answer names it); neither the session token nor the consent token is carried.',
  properties: {
    session_id: string('The session (`dcs_…`)', { pattern: '^dcs_' }),
    record_id: { type: ['string', 'null'], description: "The session's record" },
    kind: { type: 'string', const: kind },
    outcome: { type: 'string', enum: outcomesOf },
    flow_id: { type: ['string', 'null'], description: 'The flow (`flw_…`)' },
    flow_version: { type: ['integer', 'null'], description: 'The flow version answered' },
    subject: SESSION_SUBJECT,
    ...(kind === 'consent'
      ? { purposes: outcomes(['granted', 'declined', 'objected', 'noticed'], "Each purpose's outcome (absent for sessions completed before purpose outcomes were kept)") }
      : {
          approval: { type: 'object', additionalProperties: true, description: 'What was asked to approve (approval sessions)' },
          counter: { type: 'object', additionalProperties: true, description: 'The counter-proposal (`approval.countered`)' },
        }),
    requested_at: dateTime('When the session was created'),
    notice_shown_at: dateTime('When the notice was shown, if it was'),
    completed_at: dateTime('When the person decided'),
    delivery_mode: { type: 'string', enum: ['embed', 'popup', 'redirect', 'direct'] },
    locale: string('The locale the session was shown in'),
  },
});

/** `approval.expired`: an approval session ended with no decision (its deadline passed, or it was cancelled). */
const APPROVAL_EXPIRED: Schema = {
  type: 'object',
  additionalProperties: true,
  required: ['session_id', 'kind', 'outcome', 'ended', 'actor', 'subject', 'requested_at', 'ended_at', 'delivery_mode'],
  description: 'An approval ended with no decision: no one will approve it. Matched to the session by `session_id`.',
  properties: {
    session_id: string('The session (`dcs_…`)', { pattern: '^dcs_' }),
    kind: { type: 'string', const: 'approval' },
    outcome: { type: 'null' },
    ended: {
      type: 'string',
      enum: ['deadline', 'cancelled_by_person', 'cancelled_by_host'],
      description: 'Its deadline (or the session’s end, SESSION_TTL_SECONDS) passed; the person cancelled it; or the host page did (`service:cancel`)',
    },
    reason: string('A cancel’s reason as given (at most 200 characters); absent at a deadline'),
    actor: {
      type: 'object',
      required: ['type'],
      properties: { type: { type: 'string', enum: ['system', 'participant', 'host'] }, id: string('The person (`sub_…`) when they had signed in') },
    },
    subject: SESSION_SUBJECT,
    approval: { type: 'object', additionalProperties: true, description: 'What was asked to approve' },
    requested_at: dateTime('When the session was created'),
    ended_at: dateTime('When it ended'),
    delivery_mode: { type: 'string', enum: ['embed', 'popup', 'redirect', 'direct'] },
  },
};

/** A consent record's `consent.granted`/`consent.denied` (Record API, imports, captures, form builders). */
const RECORD_DECISION: Schema = {
  type: 'object',
  additionalProperties: true,
  required: ['record_id', 'kind', 'outcome', 'flow_id', 'flow_version', 'subject', 'purposes', 'channel', 'captured_at', 'recorded_at', 'actor'],
  description: 'A consent record was recorded (Record API, an import, a capture, a form builder).',
  properties: {
    record_id: string('The record (`rec_…`)'),
    kind: { type: 'string', const: 'consent' },
    outcome: { type: 'string', enum: ['granted', 'declined'] },
    flow_id: string('The flow (`flw_…`)'),
    flow_version: { type: 'integer' },
    subject: SUBJECT,
    purposes: outcomes(['granted', 'declined', 'objected', 'noticed'], "Each purpose's outcome"),
    channel: { type: 'string', enum: RECORD_CHANNELS, description: 'How the decision reached the service' },
    captured_at: dateTime('When the person decided'),
    recorded_at: dateTime('When the service recorded it'),
    supersedes: string("The person's record (same flow) this one replaces"),
    superseded_by: string('A record captured before the newest one: the record captured just after it, which replaces it at once'),
    wording_verdict: outcomes(['match', 'drift'], 'Per purpose, whether the wording shown matched the flow version'),
    collection_platform: string('The form builder'),
    rendering_evidence: { type: 'array', items: { type: 'object', additionalProperties: true }, description: "The consent field's rendering evidence" },
    presentation_stated: strings('The purposes whose decision stated `default_checked` and `mandatory`'),
    actor: ACTOR,
  },
};

/** A consent record's withdrawal (`consent.purpose_revoked`, `consent.revoked`). */
const RECORD_WITHDRAWAL: Schema = {
  type: 'object',
  additionalProperties: true,
  required: ['record_id', 'flow_id', 'flow_version', 'subject', 'purposes', 'withdrawn', 'withdrawn_at', 'actor'],
  // A hosted consent's withdrawal names its session: that is the other schema (exactly one applies).
  not: { required: ['session_id'] },
  description: 'Something was withdrawn from (or objected to on) a consent record of the Record API, an import, a capture or a form builder.',
  properties: {
    record_id: string('The record (`rec_…`)'),
    superseded_by: string('The newer record that replaced it (`channel: newer_record`)'),
    flow_id: string('The flow (`flw_…`)'),
    flow_version: {
      type: 'integer',
      description: "The flow version of the record withdrawn from, as that record's `consent.granted`/`consent.denied` names it (not the newer record's, which may be of a later version)",
    },
    subject: SUBJECT,
    purposes: outcomes(['granted', 'declined', 'objected', 'noticed', 'withdrawn'], "Each purpose's outcome on the record after the withdrawal"),
    withdrawn: strings('The purposes this event withdrew (may be empty when only `objected` changed)'),
    objected: strings('Legitimate-interest purposes a newer record objects to'),
    channel: { type: 'string', enum: WITHDRAWAL_CHANNELS, description: 'Where the withdrawal was made' },
    withdrawn_at: dateTime('When the withdrawal (or objection) was made'),
    carried_from: string('The record the person withdrew on, for a withdrawal carried onto a newer record'),
    scope: SCOPE,
    actor: ACTOR,
  },
};

/** A hosted consent's `consent.revoked`, or `consent.purpose_revoked` when some of it stays given. */
const SESSION_REVOCATION: Schema = {
  type: 'object',
  additionalProperties: true,
  required: ['session_id', 'record_id', 'flow_id', 'flow_version', 'subject'],
  description:
    'A consent given on the hosted pages was withdrawn, all of it (`consent.revoked`: its session token, the person on their records page, or a newer decision of the flow) or some purposes (`consent.purpose_revoked`: the person on their records page, or a newer decision). `purposes` and `withdrawn` are absent on revocations made before they were added.',
  properties: {
    session_id: string('The session (`dcs_…`)', { pattern: '^dcs_' }),
    record_id: { type: ['string', 'null'] },
    superseded_by: string('The newer decision of the same person and flow that took it back (`channel: newer_record`): a record, or another hosted consent'),
    flow_id: { type: ['string', 'null'] },
    flow_version: { type: ['integer', 'null'] },
    subject: SESSION_SUBJECT,
    purposes: outcomes(
      ['granted', 'withdrawn', 'declined', 'objected'],
      "Each consent purpose's outcome after it: `withdrawn`, `granted` while it stays given, or `declined` if it never was given; and `objected` for a legitimate interest a newer decision objects to",
    ),
    withdrawn: strings('The purposes withdrawn now'),
    objected: strings('Legitimate-interest purposes it let stand that a newer record objects to'),
    scope: SCOPE,
    channel: { type: 'string', enum: WITHDRAWAL_CHANNELS, description: 'Withdrawn by the person on their records page, or by a newer decision (`newer_record`); absent for a revocation with the session token' },
    withdrawn_at: dateTime('When the withdrawal was made (the newer decision, for `newer_record`)'),
    actor: ACTOR,
  },
};

const FLOW_ACTIVATED: Schema = {
  type: 'object',
  additionalProperties: true,
  required: ['flow_id', 'version', 'terms_fingerprint', 'supersedes'],
  properties: {
    flow_id: string('The flow (`flw_…`)'),
    version: { type: 'integer', description: 'The version now active' },
    terms_fingerprint: string("The version's terms fingerprint"),
    supersedes: { type: ['integer', 'null'], description: 'The version it replaced, if one was active' },
  },
};

const TEST: Schema = {
  type: 'object',
  additionalProperties: true,
  required: ['message', 'subscription_id'],
  properties: { message: { type: 'string' }, subscription_id: string('The subscription tested') },
};

const RESERVED: Schema = { type: 'object', additionalProperties: true, description: 'Reserved: nothing sends this event type yet.' };

/** The `data` of each event type, by the name of its component schema. */
const DATA: Record<string, [string, Schema]> = {
  'consent.granted': ['WebhookConsentDecisionData', { oneOf: [ref('WebhookSessionConsentData'), ref('WebhookRecordDecisionData')] }],
  'consent.denied': ['WebhookConsentDecisionData', { oneOf: [ref('WebhookSessionConsentData'), ref('WebhookRecordDecisionData')] }],
  'consent.revoked': ['WebhookConsentRevokedData', { oneOf: [ref('WebhookSessionRevocationData'), ref('WebhookRecordWithdrawalData')] }],
  'consent.purpose_revoked': ['WebhookConsentPurposeRevokedData', { oneOf: [ref('WebhookSessionRevocationData'), ref('WebhookRecordWithdrawalData')] }],
  'approval.granted': ['WebhookSessionApprovalData', sessionOutcome('approval', ['approved', 'denied', 'countered'])],
  'approval.denied': ['WebhookSessionApprovalData', sessionOutcome('approval', ['approved', 'denied', 'countered'])],
  'approval.countered': ['WebhookSessionApprovalData', sessionOutcome('approval', ['approved', 'denied', 'countered'])],
  'approval.expired': ['WebhookApprovalExpiredData', APPROVAL_EXPIRED],
  'flow.activated': ['WebhookFlowActivatedData', FLOW_ACTIVATED],
  [WEBHOOK_TEST_EVENT]: ['WebhookTestData', TEST],
};

const SCHEMAS: Record<string, Schema> = {
  WebhookSessionConsentData: sessionOutcome('consent', ['granted', 'declined']),
  WebhookRecordDecisionData: RECORD_DECISION,
  WebhookSessionRevocationData: SESSION_REVOCATION,
  WebhookRecordWithdrawalData: RECORD_WITHDRAWAL,
  WebhookReservedEventData: RESERVED,
};

const HEADERS = {
  'X-Service-Signature': {
    required: true,
    description:
      '`v1=<hex HMAC-SHA256 over "<X-Service-Timestamp>.<raw body>">`, the key being the subscription secret\'s UTF-8 bytes. Check it over the exact bytes received, in constant time; `@dcr/server-sdk` `verifyWebhook` does.',
    schema: { type: 'string', pattern: '^v1=[0-9a-f]{64}$' },
  },
  'X-Service-Timestamp': { required: true, description: 'Unix seconds of this attempt (refuse ones more than 5 minutes away)', schema: { type: 'string', pattern: '^[0-9]+$' } },
  'X-Service-Event-ID': { required: true, description: 'The event id, the same on every attempt and replay: the idempotency key', schema: { type: 'string' } },
  'X-Service-Event-Type': { required: true, description: 'The event type', schema: { type: 'string' } },
};

/** The delivery of one event type: its envelope and headers. */
function delivery(event: string, data: Schema): Schema {
  return {
    post: {
      summary: `\`${event}\` delivered to a subscription's URL`,
      description:
        'Signed POST, at least once (retried on a 5xx, a timeout or a network error; five attempts). Any 2xx acknowledges it; answer within 15 s. ' +
        'The exact bytes are signed; the top-level keys come in this order, `data`\'s in no promised order, and `data` may gain fields. See docs/webhooks.md.',
      parameters: Object.entries(HEADERS).map(([name, header]) => ({ name, in: 'header', ...header })),
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['event', 'id', 'created_at', 'application_id', 'data'],
              additionalProperties: false,
              properties: {
                event: { type: 'string', const: event },
                id: string('The event id (`evt_…`), as `X-Service-Event-ID`', { pattern: '^evt_' }),
                created_at: dateTime('When the service recorded the event: put a record\'s events in order by it'),
                application_id: string('The application'),
                data,
              },
            },
          },
        },
      },
      responses: { '2XX': { description: 'Received; any 2xx. A 5xx or no answer is retried; any other answer fails the delivery at once.' } },
    },
  };
}

/** Adds `webhooks` (one entry per event type, and `webhook.test`) and the schemas of their `data`. */
export function addWebhooks(document: OpenAPIObject): void {
  const schemas = (document.components ??= {}).schemas ??= {};
  Object.assign(schemas, SCHEMAS);
  const webhooks: Record<string, Schema> = {};
  for (const event of [...WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT]) {
    const [name, schema] = DATA[event] ?? ['WebhookReservedEventData', RESERVED];
    schemas[name] ??= schema;
    webhooks[event] = delivery(event, ref(name));
  }
  (document as OpenAPIObject & { webhooks?: Record<string, Schema> }).webhooks = webhooks;
}
