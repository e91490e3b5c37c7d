import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ConsentStatusRequest, CreateConsentRecordRequest, RECORDS_CONSENT_STATUS, RECORDS_CREATE } from '@dcr/contracts';
import { ConsentStatus } from './consent-status';
import { RecordConsent } from './record-consent';

@Controller()
export class RecordsController {
  constructor(
    private readonly recordConsent: RecordConsent,
    private readonly status: ConsentStatus,
  ) {}

  @MessagePattern(RECORDS_CREATE)
  create(@Payload() request: CreateConsentRecordRequest) {
    return this.recordConsent.execute(request);
  }

  @MessagePattern(RECORDS_CONSENT_STATUS)
  consentStatus(@Payload() request: ConsentStatusRequest) {
    return this.status.of(request);
  }
}
