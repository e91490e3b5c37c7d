import { ApiRequester, RequestOptions, route, WithResponse } from '../requester';

export type DecisionKind = 'consent' | 'approval';
export type DeliveryMode = 'embed' | 'popup' | 'redirect' | 'direct';

/** The nine session statuses; only `fulfilled` counts as consented. */
export type SessionStatus =
  | 'pending'
  | 'authenticating'
  | 'verifying'
  | 'reviewing'
  | 'informed'
  | 'evidenced'
  | 'fulfilled'
  | 'expired'
  | 'revoked';

/** Which authority bound made an agent ask for approval. */
export type ApprovalTrigger = 'scope' | 'action' | 'value' | 'time' | 'escalation' | 'reputation';

export interface DecisionSubject {
  /** Only this person may sign in and decide. */
  email?: string;
  /** Your own id for the person. */
  external_id?: string;
}

export interface ApprovalRequest {
  title: string;
  description?: string;
  /** For example `payments.create`. */
  action: string;
  /** Integer minor units (cents) and an ISO 4217 currency. */
  value?: { amount: number; currency: string };
  trigger: ApprovalTrigger;
  agent_id?: string;
}

export interface DecisionCreateParams {
  kind: DecisionKind;
  /** A `flw_` id of an active flow; required for consent, optional for approval. */
  flow_id?: string;
  /** Defaults to the API token's own application. */
  application_id?: string;
  /** Default `direct`. */
  delivery_mode?: DeliveryMode;
  /** The host page's origin (embed, popup); must be one of the application's allowed origins. */
  embed_origin?: string;
  /** Redirect mode: where the person lands; its origin must be an allowed origin. */
  redirect_uri?: string;
  subject?: DecisionSubject;
  /** ISO 8601; past it the session expires (at most 30 days ahead). */
  deadline_at?: string;
  /** Required for approval. */
  approval?: ApprovalRequest;
  /** The page's language, for example `en` or `de-DE`; defaults to the flow's locale. */
  locale?: string;
}

/** A consent session: a decision of kind consent for a flow. */
export type SessionCreateParams = Omit<DecisionCreateParams, 'kind' | 'approval' | 'flow_id'> & { flow_id: string };

/** The session: send the person to `decision_url` (or frame `embed_url`). */
export interface Decision {
  /** `dcs_…`: the session's public id, which its webhooks name (`data.session_id`). */
  session_id: string;
  /** `dts_…`: opaque; it names the session's home country. The person's credential: no webhook carries it. */
  session_token: string;
  decision_url: string;
  embed_url: string;
  kind: DecisionKind;
  status: SessionStatus;
  delivery_mode: DeliveryMode;
  flow_id: string | null;
  flow_version: number | null;
  expires_at: string;
  deadline_at: string | null;
  created_at: string;
}

export interface DecisionVerifyParams {
  /** The consent token from the completion message (`exchange_token`). */
  consent_token: string;
}

export interface DecisionVerification {
  valid: boolean;
  /** `fulfilled` on the first check of a granted decision; `expired` for a replay, an old or an unknown token; `revoked` after a withdrawal. */
  status: SessionStatus;
  /** For example `granted`, `declined`, `approved`, `denied`, `countered`. */
  outcome?: string;
}

export interface DecisionExchangeParams {
  /** The `exchange_token` of the completion message (the consent token). */
  exchange_token: string;
}

export interface DecisionExchange {
  status: SessionStatus;
  outcome: string;
  /** The receipt's record id (`rec_<cc>…`). */
  record_id: string;
  claims: Record<string, unknown>;
  attestations: Array<Record<string, unknown>>;
  credentials: Array<Record<string, unknown>>;
}

export interface CaptureAuthorizeParams {
  /** Binds the person; kept only in their home country. */
  subject: { email: string; external_id?: string };
  /** true: no receipt e-mail to the person. */
  suppress_receipt?: boolean;
}

export interface CaptureAuthorization {
  status: 'granted' | 'declined';
  record_id: string;
  /** `form_capture` or `embedded_field`. */
  channel: string;
}

/**
 * Decisions: ask a person (consent or approval), then learn the outcome server-side. The completion
 * message in the browser is a prompt to check, never proof: `verify` or `exchange` the token it carries.
 */
export class Decisions {
  constructor(protected readonly requester: ApiRequester) {}

  /** `POST /api/v1/decisions`: opens a session. A named subject homed in another country raises `WrongCountryError`. */
  async create(params: DecisionCreateParams, options?: RequestOptions): Promise<WithResponse<Decision>> {
    return this.requester.send<Decision>({ method: 'POST', path: '/api/v1/decisions', body: params }, options);
  }

  /**
   * `GET /api/v1/decisions/<session_token>/verify`: checks the consent token once. The check uses
   * the token up, so it is retried only when the service provably did nothing (429, no connection);
   * prefer `exchange`, a POST whose idempotency key makes every failure safe to retry.
   */
  async verify(sessionToken: string, params: DecisionVerifyParams, options?: RequestOptions): Promise<WithResponse<DecisionVerification>> {
    return this.requester.send<DecisionVerification>(
      { method: 'GET', path: route`/api/v1/decisions/${sessionToken}/verify`, query: { consent_token: params.consent_token }, retry: 'unprocessed' },
      options,
    );
  }

  /**
   * `POST /api/v1/decisions/<session_token>/exchange`: trades the completion message's
   * `exchange_token` (single use, 5 minutes) for the outcome. A spent or old token raises `GoneError`.
   */
  async exchange(sessionToken: string, params: DecisionExchangeParams, options?: RequestOptions): Promise<WithResponse<DecisionExchange>> {
    return this.requester.send<DecisionExchange>({ method: 'POST', path: route`/api/v1/decisions/${sessionToken}/exchange`, body: params }, options);
  }

  /**
   * `POST /api/v1/decisions/<capture_token>/authorize`: commits a capture made in your own form
   * (the `service_capture_token` field) with the person's e-mail, freezing the receipt. A capture
   * older than 24 hours raises `GoneError`; committing it for another person, `ConflictError`.
   */
  async authorize(captureToken: string, params: CaptureAuthorizeParams, options?: RequestOptions): Promise<WithResponse<CaptureAuthorization>> {
    return this.requester.send<CaptureAuthorization>({ method: 'POST', path: route`/api/v1/decisions/${captureToken}/authorize`, body: params }, options);
  }
}

/**
 * Consent sessions, the browser client's `createSession({flowId})` on the server: decisions of kind
 * consent, through `POST /api/v1/decisions` (not the deprecated `/api/v1/consent_sessions`).
 */
export class Sessions {
  constructor(private readonly decisions: Decisions) {}

  async create(params: SessionCreateParams, options?: RequestOptions): Promise<WithResponse<Decision>> {
    return this.decisions.create({ ...params, kind: 'consent' }, options);
  }

  async verify(sessionToken: string, params: DecisionVerifyParams, options?: RequestOptions): Promise<WithResponse<DecisionVerification>> {
    return this.decisions.verify(sessionToken, params, options);
  }

  async exchange(sessionToken: string, params: DecisionExchangeParams, options?: RequestOptions): Promise<WithResponse<DecisionExchange>> {
    return this.decisions.exchange(sessionToken, params, options);
  }
}
