import { ApiRequester, RequestOptions, route, WithResponse } from '../requester';

export type ReceiptFlavor = 'canonical' | 'dpv' | 'signed';

export interface ReceiptEvent {
  event_time: string;
  entity_id: string;
  event_type: 'explicit' | 'implicit' | 'regular';
  /** For example `consent given`, `consent withdrawn`, `consent expired`. */
  event_state: string;
  validity_duration?: string;
  purpose_id?: string;
  record_reference?: string;
  event_channel?: string;
  [field: string]: unknown;
}

/**
 * An ISO/IEC TS 27560 consent receipt (`service-cr/2.13`). Absence is meaningful: a field the
 * service cannot state truthfully is omitted. See docs/receipts.md and the schema at `$schema`.
 */
export interface ConsentReceipt {
  $schema: string;
  record: {
    schema_version: string;
    conforms_to: string;
    record_id: string;
    record_type?: 'consent_record' | 'notice_record' | 'authorization_record';
    anonymous?: true;
    pii_principal_id?: string;
    [field: string]: unknown;
  };
  pii_processing: {
    language: string;
    jurisdiction: string;
    purposes: Array<{ purpose_id: string; [field: string]: unknown }>;
    [field: string]: unknown;
  };
  party_identification: Array<{ party_id: string; party_name: string; party_role: string; [field: string]: unknown }>;
  authority?: Record<string, unknown>;
  event: ReceiptEvent[];
  extensions: Record<string, unknown>;
}

/** `flavor=signed`: a detached JWS (RFC 7515 appendix F) over the RFC 8785 bytes of `payload`. */
export interface SignedReceipt {
  payload: ConsentReceipt;
  /** `<protected>..<signature>`; the key is in `/.well-known/jwks.json`. */
  signature: string;
}

/** `flavor=dpv`: JSON-LD with an inline `@context` (W3C DPV terms). */
export interface DpvReceipt {
  '@context': unknown;
  [field: string]: unknown;
}

/** Consent receipts of this country's records; a record kept in another country raises `WrongCountryError`. */
export class Receipts {
  constructor(private readonly requester: ApiRequester) {}

  /** `GET /api/v1/consent_receipts/<record_id>?flavor=`: `canonical` (default), `dpv` or `signed`. */
  get(recordId: string, params?: { flavor?: 'canonical' }, options?: RequestOptions): Promise<WithResponse<ConsentReceipt>>;
  get(recordId: string, params: { flavor: 'signed' }, options?: RequestOptions): Promise<WithResponse<SignedReceipt>>;
  get(recordId: string, params: { flavor: 'dpv' }, options?: RequestOptions): Promise<WithResponse<DpvReceipt>>;
  async get(recordId: string, params: { flavor?: ReceiptFlavor } = {}, options?: RequestOptions): Promise<WithResponse<ConsentReceipt | SignedReceipt | DpvReceipt>> {
    return this.requester.send({ method: 'GET', path: route`/api/v1/consent_receipts/${recordId}`, query: { flavor: params.flavor } }, options);
  }
}
