import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AuthorizeCaptureReply, AuthorizeCaptureRequest, CaptureCreatedReply, CreateCaptureRequest } from '@dcr/contracts';
import {
  assertCapturable,
  DomainError,
  FlowTerms,
  hashCredential,
  newOpaqueId,
  normaliseEmail,
  notFound,
  randomString,
  recordAttestation,
  recordRequestFingerprint,
  validationFailed,
} from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';
import { FlowsRepository } from '../flows/flows.repository';
import { Capture } from './capture.entity';
import { RecordConsent } from './record-consent';

const UNIQUE_VIOLATION = '23505';

/** An uncommitted capture is held this long, then it leaves no record. */
export const CAPTURE_TTL_MS = 24 * 3600 * 1000;

/**
 * The published wording of a purpose, as a capture attests it: SHA-256 (hex) of the label text with
 * its whitespace collapsed and trimmed, as the client script reads a label (libs/client-sdk
 * labelText): a label that shows the published wording, line breaks and double spaces included (the
 * `wording` option writes it as published), is a match.
 */
export function labelDigest(label: string): string {
  return createHash('sha256').update(label.replace(/\s+/g, ' ').trim(), 'utf8').digest('hex');
}

/**
 * Consent captured in the organisation's own form: the browser posts the sanitised snapshot (each
 * purpose's decision and presentation, label digests) with the publishable key and gets a capture
 * token; the organisation's server commits it with the person's e-mail (`authorize`), which records
 * it through the Record API's path with the capture's channel.
 */
@Injectable()
export class Captures implements OnApplicationBootstrap, OnApplicationShutdown {
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly dataSource: DataSource,
    private readonly flows: FlowsRepository,
    private readonly recordConsent: RecordConsent,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  async create(request: CreateCaptureRequest): Promise<CaptureCreatedReply> {
    const flow = await this.flows.active(request.flow_id);
    if (!flow || flow.applicationId !== request.application_id) {
      throw validationFailed([{ field: 'flow_id', reason: 'no active flow with this id in this application' }]);
    }
    // A consent field capture answers the version the field showed: a newer one means new wording.
    if (request.render && request.render.flow_version !== flow.version) {
      throw validationFailed([
        { field: 'render_proof', reason: `the field showed version ${request.render.flow_version} of the flow, version ${flow.version} is active now: reload the page` },
      ]);
    }
    if (request.channel === 'embedded_field' && !request.render) {
      throw validationFailed([{ field: 'render_proof', reason: "embedded_field captures are posted by the consent field's frame with its render proof" }]);
    }
    const terms = flow.terms as unknown as FlowTerms;
    assertCapturable(terms);
    recordAttestation(terms, request.decisions as never);
    // The snapshot keeps each purpose's decision and presentation, nothing else the browser sent.
    const decisions = Object.fromEntries(
      Object.entries(request.decisions).map(([key, value]) => [key, { decision: value.decision, default_checked: value.default_checked === true, mandatory: value.mandatory === true }]),
    );
    let wordingVerdict: Record<string, 'match' | 'drift'> | null = null;
    if (request.labels) {
      wordingVerdict = {};
      for (const [key, digest] of Object.entries(request.labels)) {
        const purpose = terms.purposes.find((candidate) => candidate.key === key);
        if (!purpose) throw validationFailed([{ field: `labels.${key}`, reason: 'not a purpose of this flow' }]);
        if (typeof digest !== 'string' || !/^[0-9a-f]{64}$/i.test(digest)) throw validationFailed([{ field: `labels.${key}`, reason: 'must be the SHA-256 (hex) of the label text' }]);
        // Hex in either case: the digest is the same.
        wordingVerdict[key] = digest.toLowerCase() === labelDigest(purpose.label) ? 'match' : 'drift';
      }
    }
    const token = `cap_${this.context.env.COUNTRY.toLowerCase()}${randomString(30)}`;
    const now = new Date();
    const capture = Object.assign(new Capture(), {
      id: newOpaqueId('cpt', 20),
      tokenHash: hashCredential(token),
      applicationId: request.application_id,
      flowId: flow.id,
      flowVersion: flow.version,
      channel: request.channel,
      decisions,
      wordingVerdict,
      origin: request.origin ?? null,
      renderNonce: request.render?.nonce ?? null,
      renderingEvidence: request.rendering_evidence ?? null,
      createdAt: now,
      expiresAt: new Date(now.getTime() + CAPTURE_TTL_MS),
      recordId: null,
    });
    const used = 'The render proof was already used: each rendering of the consent field captures once (the field renews its proof)';
    if (capture.renderNonce && (await this.dataSource.manager.exists(Capture, { where: { renderNonce: capture.renderNonce } }))) {
      throw new DomainError('unauthenticated', used);
    }
    try {
      // The unique index decides between two uses of one proof at the same moment.
      await this.dataSource.manager.insert(Capture, capture);
    } catch (error) {
      if ((error as { code?: string; constraint?: string }).code === UNIQUE_VIOLATION && (error as { constraint?: string }).constraint === 'UQ_captures_render_nonce') {
        throw new DomainError('unauthenticated', used);
      }
      throw error;
    }
    const reply: CaptureCreatedReply = { capture_token: token, expires_at: capture.expiresAt.toISOString(), ...(wordingVerdict ? { wording_verdict: wordingVerdict } : {}) };
    if (!request.commit) return reply;
    // Browser commit: recorded now, at the lower assurance its channel names; a refusal leaves no capture.
    try {
      const committed = await this.commit(capture, request.commit.subject, false, `${capture.channel}_browser` as 'form_capture_browser' | 'embedded_field_browser');
      return { ...reply, record_id: committed.record_id, channel: committed.channel };
    } catch (error) {
      await this.dataSource.manager.delete(Capture, { id: capture.id });
      throw error;
    }
  }

  async authorize(request: AuthorizeCaptureRequest): Promise<AuthorizeCaptureReply> {
    const capture = await this.dataSource.manager.findOne(Capture, { where: { tokenHash: hashCredential(request.capture_token) } });
    if (!capture || capture.applicationId !== request.application_id) throw notFound('Capture');
    if (!capture.recordId && capture.expiresAt.getTime() <= Date.now()) {
      throw new DomainError('gone', 'The capture expired uncommitted (captures are held 24 hours) and left no record');
    }
    // A capture committed before (by the browser too) answers its record, with the channel it was recorded on.
    return this.commit(capture, request.subject, request.suppress_receipt === true, capture.channel as 'form_capture' | 'embedded_field');
  }

  private async commit(
    capture: Capture,
    subject: { email: string; external_id?: string },
    suppressReceipt: boolean,
    channel: 'form_capture' | 'embedded_field' | 'form_capture_browser' | 'embedded_field_browser',
  ): Promise<AuthorizeCaptureReply> {
    const committed = this.recordConsent.execute({
      application_id: capture.applicationId,
      flow_id: capture.flowId,
      flow_version: capture.flowVersion,
      decisions: capture.decisions,
      captured_at: capture.createdAt.toISOString(),
      // Committing the same capture again answers the same record; with another person it is a conflict.
      idempotency_key: `capture:${capture.id}`,
      request_fingerprint: recordRequestFingerprint({ capture: capture.id, subject: { email: normaliseEmail(subject.email), external_id: subject.external_id ?? null } }),
      subject,
      channel,
      ...(capture.wordingVerdict ? { wording_verdict: capture.wordingVerdict } : {}),
      ...(capture.renderingEvidence ? { rendering_evidence: capture.renderingEvidence } : {}),
      send_receipt: !suppressReceipt,
    });
    // The capture's own key conflicts only when it was committed for someone else: say that, not the key.
    const { consent_record } = await committed.catch((error: unknown) => {
      if (error instanceof DomainError && error.code === 'idempotency_conflict') {
        throw new DomainError('conflict', 'This capture was committed for another person already', [{ field: 'subject', reason: 'the capture was committed for another person' }]);
      }
      throw error;
    });
    if (!capture.recordId) await this.dataSource.manager.update(Capture, { id: capture.id }, { recordId: consent_record.record_id });
    return { status: consent_record.status, record_id: consent_record.record_id, channel: consent_record.channel };
  }

  onApplicationBootstrap(): void {
    this.sweeper = setInterval(() => void this.sweep().catch(() => undefined), 60_000);
    this.sweeper.unref();
  }

  onApplicationShutdown(): void {
    if (this.sweeper) clearInterval(this.sweeper);
  }

  /** Uncommitted captures past their 24 hours are deleted: they leave no record. */
  async sweep(): Promise<number> {
    const removed: unknown[] = await this.dataSource.query(`DELETE FROM "decisions"."captures" WHERE "record_id" IS NULL AND "expires_at" < now() RETURNING 1`);
    return removed.length;
  }
}
