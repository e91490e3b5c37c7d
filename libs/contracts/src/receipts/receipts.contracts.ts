import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, Matches, ValidateNested } from 'class-validator';
import { OutboxEventInput } from '../events';
import { APPLICATION_ID } from '../patterns';

/**
 * receipts: the frozen consent records and their lifecycle. Producers hand over decision events
 * from their outboxes (request/reply; a repeat is recognised by the event id); the gateway exports
 * receipts in three flavors and publishes the signing keys.
 */
export const RECEIPTS_INGEST = 'receipts.ingest';
export const RECEIPTS_EXPORT = 'receipts.export';
export const RECEIPTS_KEYS = 'receipts.keys';

/** gateway: who an application is (not personal data), for the receipt's controller party. */
export const GATEWAY_APPLICATION_IDENTITY = 'gateway.applications.identity';

export const RECORD_ID = /^rec_[a-z]{2}[0-9a-z]{20}$/;
export const RECEIPT_FLAVORS = ['canonical', 'dpv', 'signed'] as const;
export type ReceiptFlavor = (typeof RECEIPT_FLAVORS)[number];

/** The events a producer hands over (see OutboxEventInput). */
export class ReceiptEventInput extends OutboxEventInput {}

export class ReceiptsIngestRequest {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => ReceiptEventInput)
  events: ReceiptEventInput[];
}

export interface ReceiptsIngestReply {
  frozen: number;
  lifecycle: number;
}

export class ReceiptExportRequest {
  @Matches(RECORD_ID)
  record_id: string;

  @IsIn(RECEIPT_FLAVORS as unknown as string[])
  flavor: ReceiptFlavor;
}

/** The export and the application it belongs to, which the gateway checks before answering. */
export interface ReceiptExportReply {
  application_id: string;
  content_type: string;
  body: string;
}

export interface ReceiptKeysReply {
  /** Current public keys, as `/.well-known/jwks.json`. */
  jwks: { keys: Array<Record<string, unknown>> };
  /** Every key with its validity window, for `/.well-known/witness-configuration`. */
  receipt_keys: Array<Record<string, unknown>>;
}

export class ApplicationIdentityRequest {
  @Matches(APPLICATION_ID)
  application_id: string;
}

export interface ApplicationIdentityReply {
  id: string;
  name: string;
  environment: 'sandbox' | 'production';
}
