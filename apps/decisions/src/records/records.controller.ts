import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  AuthorizeCaptureRequest,
  CAPTURES_AUTHORIZE,
  CAPTURES_CLAIM,
  CAPTURES_CREATE,
  CAPTURES_RETRY_KEY_HELD,
  CAPTURES_SETTLE,
  CaptureClaimRequest,
  CaptureRetryKeyHeldRequest,
  CaptureSettleRequest,
  CreateCaptureRequest,
  ConsentStatusRequest,
  CreateConsentRecordRequest,
  ImportFailedRequest,
  ImportGetRequest,
  ImportRecordsRequest,
  RECORDS_CONSENT_STATUS,
  RECORDS_CREATE,
  RECORDS_IMPORT,
  RECORDS_IMPORT_FAILED,
  RECORDS_IMPORT_GET,
  RECORDS_IMPORT_LIST,
  ImportListRequest,
} from '@dcr/contracts';
import { CaptureClaims } from './capture-claims';
import { Captures } from './captures';
import { ConsentStatus } from './consent-status';
import { ImportConsentRecords } from './import-consent-records';
import { RecordConsent } from './record-consent';

@Controller()
export class RecordsController {
  constructor(
    private readonly recordConsent: RecordConsent,
    private readonly status: ConsentStatus,
    private readonly imports: ImportConsentRecords,
    private readonly captures: Captures,
    private readonly claims: CaptureClaims,
  ) {}

  @MessagePattern(CAPTURES_CREATE)
  capture(@Payload() request: CreateCaptureRequest) {
    return this.captures.create(request);
  }

  @MessagePattern(CAPTURES_AUTHORIZE)
  authorize(@Payload() request: AuthorizeCaptureRequest) {
    return this.captures.authorize(request);
  }

  /** From a peer country, the person's home: it commits a capture held here. */
  @MessagePattern(CAPTURES_CLAIM)
  claimCapture(@Payload() request: CaptureClaimRequest) {
    return this.claims.claimForPeer(request);
  }

  /** From the peer country that claimed a capture held here: what its commit made. */
  @MessagePattern(CAPTURES_SETTLE)
  settleCapture(@Payload() request: CaptureSettleRequest) {
    return this.claims.settleForPeer(request);
  }

  /** From a peer country: whether a browser commit retried there under an Idempotency-Key was first made here. */
  @MessagePattern(CAPTURES_RETRY_KEY_HELD)
  retryKeyHeld(@Payload() request: CaptureRetryKeyHeldRequest) {
    return this.captures.heldUnderRetryKey(request);
  }

  @MessagePattern(RECORDS_IMPORT)
  import(@Payload() request: ImportRecordsRequest) {
    return this.imports.execute(request);
  }

  @MessagePattern(RECORDS_IMPORT_GET)
  importReport(@Payload() request: ImportGetRequest) {
    return this.imports.get(request);
  }

  @MessagePattern(RECORDS_IMPORT_LIST)
  importList(@Payload() request: ImportListRequest) {
    return this.imports.list(request);
  }

  @MessagePattern(RECORDS_IMPORT_FAILED)
  importFailed(@Payload() request: ImportFailedRequest) {
    return this.imports.failed(request);
  }

  @MessagePattern(RECORDS_CREATE)
  create(@Payload() request: CreateConsentRecordRequest) {
    return this.recordConsent.execute(request);
  }

  @MessagePattern(RECORDS_CONSENT_STATUS)
  consentStatus(@Payload() request: ConsentStatusRequest) {
    return this.status.of(request);
  }
}
