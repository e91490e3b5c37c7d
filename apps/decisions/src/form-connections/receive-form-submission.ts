import { Injectable } from '@nestjs/common';
import { FormSubmissionReceiveReply, FormSubmissionReceiveRequest } from '@dcr/contracts';
import {
  DomainError,
  FORM_PLATFORM_CHANNEL,
  isTypeformTestRequest,
  notFound,
  parseTypeformSubmission,
  recordRequestFingerprint,
  resolveFormMapping,
  submissionRecord,
  SubmissionRecord,
  typeformSignatureRefusal,
  validationFailed,
  verifyTypeformSignature,
} from '@dcr/domain';
import { isEmail } from 'class-validator';
import { DataSource } from 'typeorm';
import { RecordConsent } from '../records/record-consent';
import { FormConnection } from './form-connection.entity';
import { FormConnectionsService } from './form-connections.service';

/**
 * The Record API names `captured_at` and `idempotency_key`; a delivery carries them as Typeform's
 * `form_response.submitted_at` and `form_response.token`.
 */
function namedInDelivery(error: unknown): unknown {
  if (error instanceof DomainError && error.code === 'idempotency_conflict') {
    return new DomainError('idempotency_conflict', 'This Typeform response was recorded before with other answers', [
      { field: 'form_response.token', reason: 'recorded before with other answers: a redelivery carries the same body; a new submission has a new token' },
    ]);
  }
  if (!(error instanceof DomainError) || error.code !== 'validation_failed' || !error.details) return error;
  const details = error.details.map((issue) => (issue.field === 'captured_at' ? { ...issue, field: 'form_response.submitted_at' } : issue));
  return validationFailed(details, error.message);
}

/**
 * One delivery of a connected form's webhook. In order: the connection (404), the signature over the
 * raw bytes with the current secret or, for a day after a rotation, the previous one (401), the
 * builder's test request (accepted, nothing recorded), then the submission read with the mapping
 * against the flow version in force at its `submitted_at` and recorded against that version through
 * the Record API's path with channel `form_platform_webhook` and the platform's name. Typeform's
 * response token is the idempotency key, so a redelivery answers the same record.
 */
@Injectable()
export class ReceiveFormSubmission {
  constructor(
    private readonly dataSource: DataSource,
    private readonly connections: FormConnectionsService,
    private readonly recordConsent: RecordConsent,
  ) {}

  async execute(request: FormSubmissionReceiveRequest): Promise<FormSubmissionReceiveReply> {
    const row = await this.dataSource.getRepository(FormConnection).findOne({ where: { id: request.connection_id } });
    if (!row) throw notFound('Form connection');

    const raw = Buffer.from(request.raw_body, 'base64');
    if (!verifyTypeformSignature(request.signature, raw, this.connections.secretsOf(row), new Date())) {
      throw new DomainError('unauthenticated', typeformSignatureRefusal(request.signature));
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new DomainError('malformed_json', 'The delivery is not JSON: Typeform sends its submission as application/json', [{ field: 'body', reason: 'is not valid JSON' }]);
    }
    const submission = parseTypeformSubmission(body);

    const emailQuestion = row.formDefinition.fields.find((field) => field.ref === row.mapping.email);
    if (emailQuestion && isTypeformTestRequest({ field: emailQuestion.ref, field_id: emailQuestion.id }, submission)) {
      return { accepted: true, test: true };
    }
    if (submission.event_type !== 'form_response') {
      throw validationFailed([{ field: 'event_type', reason: `is ${submission.event_type}: only form_response (a completed submission) is recorded` }]);
    }
    if (submission.form_id !== row.formId) {
      throw validationFailed([{ field: 'form_response.form_id', reason: `is ${submission.form_id}; this connection is for form ${row.formId}` }]);
    }
    const replay = {
      application_id: row.applicationId,
      idempotency_key: `typeform:${row.id}:${submission.token}`,
      // A redelivery carries the same response; another body under the same token is a conflict.
      request_fingerprint: recordRequestFingerprint({ connection: row.id, form_response: submission.form_response }),
    };
    let record: SubmissionRecord;
    let flowVersion: number;
    try {
      // Read with the version in force at submitted_at, as the Record API decides a record (a late or
      // retried delivery is not read with a version activated after it was submitted); a purpose that
      // version decides and the mapping lacks, or an answer to one it does not decide, is named here.
      const inForce = await this.connections.termsInForceAt(row.applicationId, row.flowId, Date.parse(submission.submitted_at));
      flowVersion = inForce.version;
      // The e-mail answer by the Record API's rule (validator.js's isEmail), so the person can be named afterwards.
      record = submissionRecord(resolveFormMapping(inForce.terms, row.formDefinition, row.mapping, { version: inForce.version }), submission, isEmail);
    } catch (error) {
      // A response recorded before the flow or the mapping changed: its redelivery answers its record.
      const { replayed } = await this.recordConsent.answeredBefore(replay, error).catch((refused: unknown) => {
        throw namedInDelivery(refused);
      });
      return { accepted: true, record_id: replayed.record_id };
    }
    const { consent_record } = await this.recordConsent
      .execute({
        ...replay,
        flow_id: row.flowId,
        subject: { email: record.email, ...(record.external_id ? { external_id: record.external_id } : {}) },
        decisions: record.decisions,
        captured_at: record.captured_at,
        // Recorded against the version it was read with (checked as a pinned version is: activated by captured_at, or the first).
        flow_version: flowVersion,
        version_rule: 'in_force_at_capture',
        channel: FORM_PLATFORM_CHANNEL,
        collection_platform: 'typeform',
        presentation_stated: record.presentation_stated,
        send_receipt: true,
      })
      .catch((error: unknown) => {
        throw namedInDelivery(error);
      });
    return { accepted: true, record_id: consent_record.record_id };
  }
}
