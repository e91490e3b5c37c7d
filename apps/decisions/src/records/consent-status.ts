import { Injectable } from '@nestjs/common';
import { ConsentStatusReply, ConsentStatusRequest } from '@dcr/contracts';
import { consentStatusOf, validationFailed } from '@dcr/domain';
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
    const records = await this.dataSource.manager.find(ConsentRecord, {
      where: { applicationId: request.application_id, subjectId: subject.id },
      order: { recordedAt: 'ASC', recordId: 'ASC' },
    });
    return {
      subject: { id: subject.id },
      purposes: consentStatusOf(
        records.map((record) => ({
          record_id: record.recordId,
          recorded_at: record.recordedAt.toISOString(),
          captured_at: record.capturedAt.toISOString(),
          purposes: record.purposes,
          withdrawn: record.withdrawals,
        })),
      ),
    };
  }
}
