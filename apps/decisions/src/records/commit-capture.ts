import { Injectable } from '@nestjs/common';
import { AuthorizeCaptureReply, HeldCaptureMessage } from '@dcr/contracts';
import { DomainError, normaliseEmail, recordRequestFingerprint } from '@dcr/domain';
import { RecordConsent } from './record-consent';

export type CaptureChannel = 'form_capture' | 'embedded_field' | 'form_capture_browser' | 'embedded_field_browser';

/** The capture was committed for someone else: in this country, or in another (the person's home). */
export const committedForAnotherPerson = () =>
  new DomainError('conflict', 'This capture was committed for another person already', [{ field: 'subject', reason: 'the capture was committed for another person' }]);

export const captureExpired = () => new DomainError('gone', 'The capture expired uncommitted (captures are held 24 hours) and left no record');

/**
 * Records a capture with the person, through the Record API's path with the capture's channel, in
 * the country that commits it (which need not hold it: see CaptureClaims). The record's idempotency
 * key is the capture's id, so committing it again answers the same record, and committing it for
 * another person is a conflict.
 */
@Injectable()
export class CommitCapture {
  constructor(private readonly recordConsent: RecordConsent) {}

  async execute(
    applicationId: string,
    capture: HeldCaptureMessage,
    subject: { email: string; external_id?: string },
    options: { suppressReceipt: boolean; channel: CaptureChannel },
  ): Promise<AuthorizeCaptureReply> {
    const committed = this.recordConsent.execute({
      application_id: applicationId,
      flow_id: capture.flow_id,
      flow_version: capture.flow_version,
      decisions: capture.decisions,
      captured_at: capture.captured_at,
      idempotency_key: `capture:${capture.capture_id}`,
      // The person as a record keeps them (the address normalised, the external id without the spaces
      // around it), so the same person sent again answers the same record, not a conflict.
      request_fingerprint: recordRequestFingerprint({ capture: capture.capture_id, subject: { email: normaliseEmail(subject.email), external_id: subject.external_id?.trim() || null } }),
      subject,
      channel: options.channel,
      ...(capture.wording_verdict ? { wording_verdict: capture.wording_verdict } : {}),
      ...(capture.rendering_evidence ? { rendering_evidence: capture.rendering_evidence } : {}),
      send_receipt: !options.suppressReceipt,
    });
    // The capture's own key conflicts only when it was committed for someone else: say that, not the key.
    const { consent_record } = await committed.catch((error: unknown) => {
      if (error instanceof DomainError && error.code === 'idempotency_conflict') throw committedForAnotherPerson();
      throw error;
    });
    return { status: consent_record.status, record_id: consent_record.record_id, channel: consent_record.channel };
  }
}

/** A commit that failed so that it wrote nothing: the person is homed elsewhere, or the capture rules refused. */
export function recordedNothing(error: unknown): boolean {
  return error instanceof DomainError && (error.code === 'wrong_country' || error.code === 'validation_failed');
}
