import { Injectable } from '@nestjs/common';
import { ConsentStatusReply, ConsentStatusRequest } from '@dcr/contracts';
import { consentLapsesAt, consentStatusOf, validationFailed } from '@dcr/domain';
import { DataSource } from 'typeorm';
import { SubjectsService } from '../subjects/subjects.service';
import { ConsentRecord } from './consent-record.entity';

/** A person's current status per purpose, across the records of the application, newest deciding. */
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
    // Each record with its flow version's consent duration, for when its consent lapses.
    const records: Array<{
      record_id: string;
      recorded_at: Date;
      captured_at: Date;
      purposes: ConsentRecord['purposes'];
      withdrawals: ConsentRecord['withdrawals'];
      consent_duration: string | null;
    }> = await this.dataSource.query(
      `SELECT r."record_id", r."recorded_at", r."captured_at", r."purposes", r."withdrawals", f."terms"->>'consent_duration' AS "consent_duration"
         FROM "decisions"."consent_records" r
         JOIN "decisions"."flow_versions" f ON f."id" = r."flow_id" AND f."version" = r."flow_version"
        WHERE r."application_id" = $1 AND r."subject_id" = $2
        ORDER BY r."recorded_at", r."record_id"`,
      [request.application_id, subject.id],
    );
    return {
      subject: { id: subject.id },
      purposes: consentStatusOf(
        records.map((record) => {
          const expiresAt = consentLapsesAt(record.captured_at, record.consent_duration);
          return {
            record_id: record.record_id,
            recorded_at: new Date(record.recorded_at).toISOString(),
            captured_at: new Date(record.captured_at).toISOString(),
            ...(expiresAt ? { expires_at: expiresAt } : {}),
            purposes: record.purposes,
            withdrawn: record.withdrawals,
          };
        }),
      ),
    };
  }
}
