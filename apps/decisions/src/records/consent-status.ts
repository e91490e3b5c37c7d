import { Injectable } from '@nestjs/common';
import { ConsentStatusReply, ConsentStatusRequest } from '@dcr/contracts';
import { consentLapsesAt, consentStatusOf, HostedConsentDecision, hostedDecisionHistory, RecordHistoryEntry, validationFailed } from '@dcr/domain';
import { DataSource } from 'typeorm';
import { SubjectsService } from '../subjects/subjects.service';
import { ConsentRecord } from './consent-record.entity';

interface RecordRow {
  record_id: string;
  flow_id: string;
  recorded_at: Date;
  captured_at: Date;
  purposes: ConsentRecord['purposes'];
  withdrawals: ConsentRecord['withdrawals'];
  consent_duration: string | null;
}

/**
 * A person's current status per purpose, across the records of the application and the consents
 * they decided on its hosted pages, the newest decision deciding (consentStatusOf).
 */
@Injectable()
export class ConsentStatus {
  constructor(
    private readonly dataSource: DataSource,
    private readonly subjects: SubjectsService,
  ) {}

  async of(request: ConsentStatusRequest): Promise<ConsentStatusReply> {
    const given = [request.subject_id, request.external_id, request.email].filter((value) => value !== undefined);
    if (given.length !== 1) {
      throw validationFailed([{ field: 'subject', reason: 'give exactly one of subject[id], subject[external_id] or subject[email]' }]);
    }
    const subject = request.subject_id
      ? await this.subjects.get({ application_id: request.application_id, subject_id: request.subject_id })
      : await this.subjects.find({ application_id: request.application_id, external_id: request.external_id, email: request.email });
    // The person's records and their decided consent sessions (the hosted pages), at once.
    const [records, sessions] = await Promise.all([this.records(request.application_id, subject.id), this.hostedDecisions(request.application_id, subject.id)]);
    return {
      subject: { id: subject.id },
      purposes: consentStatusOf([
        ...records.map((record): RecordHistoryEntry => {
          const expiresAt = consentLapsesAt(record.captured_at, record.consent_duration);
          return {
            record_id: record.record_id,
            flow_id: record.flow_id,
            recorded_at: new Date(record.recorded_at).toISOString(),
            captured_at: new Date(record.captured_at).toISOString(),
            ...(expiresAt ? { expires_at: expiresAt } : {}),
            purposes: record.purposes,
            withdrawn: record.withdrawals,
          };
        }),
        ...sessions.map(hostedDecisionHistory),
      ]),
    };
  }

  /** Each record of the person with its flow version's consent duration, for when its consent lapses. */
  private records(applicationId: string, subjectId: string): Promise<RecordRow[]> {
    return this.dataSource.query(
      `SELECT r."record_id", r."flow_id", r."recorded_at", r."captured_at", r."purposes", r."withdrawals", f."terms"->>'consent_duration' AS "consent_duration"
         FROM "decisions"."consent_records" r
         JOIN "decisions"."flow_versions" f ON f."id" = r."flow_id" AND f."version" = r."flow_version"
        WHERE r."application_id" = $1 AND r."subject_id" = $2
        ORDER BY r."recorded_at", r."record_id"`,
      [applicationId, subjectId],
    );
  }

  /**
   * The person's consents decided on the hosted pages: every consent session of theirs completed
   * with a decision (granted, revoked since, or declined), with the terms of the flow version it
   * answered and the purposes the person withdrew from it one at a time. A revoked session changes no
   * more, so its `updated_at` is when it was revoked.
   */
  private hostedDecisions(applicationId: string, subjectId: string): Promise<HostedConsentDecision[]> {
    return this.dataSource.query(
      `SELECT s."record_id", s."flow_id", s."completed_at", s."status", CASE WHEN s."status" = 'revoked' THEN s."updated_at" END AS "revoked_at",
              s."purpose_outcomes", s."purpose_decisions", s."withdrawals",
              jsonb_build_object('purposes', f."terms"->'purposes', 'consent_duration', f."terms"->'consent_duration') AS "terms"
         FROM "decisions"."decision_sessions" s
         JOIN "decisions"."flow_versions" f ON f."id" = s."flow_id" AND f."version" = s."flow_version"
        WHERE s."subject_id" = $2 AND s."application_id" = $1 AND s."record_id" IS NOT NULL AND s."kind" = 'consent'
          AND s."completed_at" IS NOT NULL
        ORDER BY s."completed_at", s."record_id"`,
      [applicationId, subjectId],
    );
  }
}
