import { plainToInstance, Transform } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  MinLength,
  ValidateBy,
  ValidateIf,
  validateSync,
  ValidationError,
} from 'class-validator';

const toInt = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : value;
const toUpper = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim().toUpperCase() : value);
const toList = ({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.split(',').map((v) => v.trim().toUpperCase()).filter(Boolean) : value;
/** An http(s) origin without a path, as PUBLIC_BASE_URL must be written. */
const PUBLIC_ORIGIN = /^https?:\/\/[^\s/]+$/;
/**
 * PUBLIC_BASE_URL as the origin a browser reaches (WHATWG URL): scheme and host lower-cased, a host
 * outside ASCII in punycode, a default port dropped. Receipts name it in `$schema` and
 * `withdrawal_method`, which their schema asks to be URIs (RFC 3986), and the mails and pages link to
 * it; `https://bücher.example` as written froze no receipt at all. A value that is not such an origin
 * is left as it is, for the check to name.
 */
const toPublicOrigin = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string' || !PUBLIC_ORIGIN.test(value)) return value;
  try {
    return new URL(value).origin;
  } catch {
    return value;
  }
};

export const TRANSPORTS = ['nats', 'inprocess'] as const;
export type TransportKind = (typeof TRANSPORTS)[number];

/**
 * What every service of one country needs, read from the environment at boot. A bad value stops the
 * process before anything listens, with a message naming the variable.
 */
export class ServiceEnvironment {
  @Transform(toUpper)
  @Matches(/^[A-Z]{2}$/, { message: 'COUNTRY must be an ISO 3166-1 alpha-2 code such as US or DE' })
  COUNTRY: string;

  @Transform(({ value }) => (typeof value === 'string' ? value.trim().toLowerCase() : value))
  @Matches(/^[a-z]{2,8}$/, { message: 'REGION must be 2 to 8 lower-case letters, such as dev, us or eu' })
  REGION: string;

  @IsString({ message: 'DATABASE_URL must be set' })
  @Matches(/^postgres(ql)?:\/\/[^\s]+$/, { message: 'DATABASE_URL must be a postgres:// or postgresql:// URL' })
  DATABASE_URL: string;

  @IsOptional()
  @IsIn(TRANSPORTS as unknown as string[], { message: `TRANSPORT must be one of ${TRANSPORTS.join(', ')}` })
  TRANSPORT: TransportKind = 'nats';

  @ValidateIf((env: ServiceEnvironment) => env.TRANSPORT === 'nats')
  @IsString({ message: 'NATS_URL must be set when TRANSPORT is nats' })
  @Matches(/^(nats|tls):\/\/[^\s]+$/, { message: 'NATS_URL must be a nats:// or tls:// URL' })
  NATS_URL?: string;

  /**
   * Optional first subject token before the country code, so that several deployments (or parallel
   * test runs) can share one NATS server: `<namespace>.<cc>.<service>.<name>`.
   */
  @IsOptional()
  @Matches(/^[a-z0-9_-]{1,32}$/, { message: 'SUBJECT_NAMESPACE must be 1 to 32 of a-z, 0-9, _ or -' })
  SUBJECT_NAMESPACE?: string;

  /** Other countries this one exchanges cross-border directory and configuration messages with. */
  @IsOptional()
  @Transform(toList)
  @Matches(/^[A-Z]{2}$/, { each: true, message: 'PEER_COUNTRIES must be a comma-separated list of ISO country codes' })
  PEER_COUNTRIES: string[] = [];

  /** Key of the keyed hash that turns a person reference into an opaque cross-border reference. */
  @IsString({ message: 'SUBJECT_REF_KEY must be set' })
  @MinLength(32, { message: 'SUBJECT_REF_KEY must be at least 32 characters of secret' })
  SUBJECT_REF_KEY: string;

  @IsOptional()
  @IsIn(['development', 'production', 'test'], { message: 'NODE_ENV must be development, production or test' })
  NODE_ENV: 'development' | 'production' | 'test' = 'production';

  @IsOptional()
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { message: 'LOG_LEVEL must be a pino level' })
  LOG_LEVEL = 'info';

  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'DB_POOL_SIZE must be an integer' })
  @Min(1, { message: 'DB_POOL_SIZE must be at least 1' })
  @Max(100, { message: 'DB_POOL_SIZE must be at most 100' })
  DB_POOL_SIZE = 10;

  /**
   * Where a service without HTTP of its own (every one but the gateway, whose probes are on PORT)
   * answers its probes, `GET /healthz` and `GET /readyz`, when it runs as its own process. Unset:
   * no probe port.
   */
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'HEALTH_PORT must be an integer' })
  @Min(1, { message: 'HEALTH_PORT must be between 1 and 65535' })
  @Max(65535, { message: 'HEALTH_PORT must be between 1 and 65535' })
  HEALTH_PORT?: number;
}

/**
 * The decisions service also mails (sign-in codes). Production sends through SMTP; development and
 * tests keep mail in a mailbox table readable at `GET /_dev/mailbox`.
 */
export class DecisionsEnvironment extends ServiceEnvironment {
  @IsOptional()
  @IsIn(['smtp', 'mailbox'], { message: 'MAIL_TRANSPORT must be smtp or mailbox' })
  // The mailbox keeps every mail (addresses and sign-in codes) in a table and sends none: in
  // production no person would get a code, and their addresses would sit there in plain text.
  @ValidateBy({
    name: 'mailboxOutsideProduction',
    validator: { validate: (value: unknown, args) => !(value === 'mailbox' && (args?.object as { NODE_ENV?: string }).NODE_ENV === 'production') },
  }, { message: 'MAIL_TRANSPORT=mailbox is for development: it sends no mail and keeps every address and code in a table; production sends mail (smtp)' })
  MAIL_TRANSPORT?: 'smtp' | 'mailbox';

  @ValidateIf((env: DecisionsEnvironment) => mailTransportOf(env) === 'smtp')
  @IsString({ message: 'SMTP_URL must be set when mail goes through SMTP (MAIL_TRANSPORT=smtp, the production default)' })
  @Matches(/^smtps?:\/\/[^\s]+$/, { message: 'SMTP_URL must be an smtp:// or smtps:// URL' })
  SMTP_URL?: string;

  @IsOptional()
  @IsString()
  MAIL_FROM = 'Decision Service <no-reply@decision-service.invalid>';

  /**
   * The country's public origin, for links in mails (the receipt mail links to the records page).
   * Required in production: every receipt mail must link to the page where the person withdraws.
   */
  @ValidateIf((env: DecisionsEnvironment) => env.NODE_ENV === 'production' || env.PUBLIC_BASE_URL !== undefined)
  @IsString({ message: 'PUBLIC_BASE_URL must be set in production (the receipt mail links to the records page there)' })
  @Transform(toPublicOrigin)
  @Matches(PUBLIC_ORIGIN, { message: 'PUBLIC_BASE_URL must be an http(s) origin without a path' })
  PUBLIC_BASE_URL?: string;

  /** How long an unfinished session stays open when the organisation gives no deadline, in seconds. */
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'SESSION_TTL_SECONDS must be an integer' })
  @Min(60, { message: 'SESSION_TTL_SECONDS must be at least 60' })
  @Max(30 * 24 * 3600, { message: 'SESSION_TTL_SECONDS must be at most 30 days' })
  SESSION_TTL_SECONDS = 24 * 3600;

  /**
   * Hosted form-builder connections keep their webhook secrets and personal access tokens encrypted
   * with FORM_CONNECTION_SECRET_KEY (32 bytes, base64; required in production, derived from
   * SUBJECT_REF_KEY elsewhere), as the webhooks service does with WEBHOOK_SECRET_KEY.
   */
  @ValidateIf((env: DecisionsEnvironment) => env.NODE_ENV === 'production' || env.FORM_CONNECTION_SECRET_KEY !== undefined)
  @IsString({ message: 'FORM_CONNECTION_SECRET_KEY must be set in production (32 random bytes, base64)' })
  @Matches(/^[A-Za-z0-9+/]{43}=$/, { message: 'FORM_CONNECTION_SECRET_KEY must be 32 bytes, base64 (openssl rand -base64 32)' })
  FORM_CONNECTION_SECRET_KEY?: string;

  /** Typeform's API, where a connection with a personal access token reads its form's definition. */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s/?#]+(\/[^\s?#]*[^\s?#/])?$/, { message: 'FORM_BUILDER_TYPEFORM_API_URL must be an http(s) URL without a trailing slash, query or fragment' })
  FORM_BUILDER_TYPEFORM_API_URL = 'https://api.typeform.com';
}

/** The mail transport in effect: the explicit setting, else SMTP in production and the mailbox otherwise. */
export function mailTransportOf(env: Pick<DecisionsEnvironment, 'MAIL_TRANSPORT' | 'NODE_ENV'>): 'smtp' | 'mailbox' {
  return env.MAIL_TRANSPORT ?? (env.NODE_ENV === 'production' ? 'smtp' : 'mailbox');
}

/** `15m`, `30s`, `2h`, `500ms`: a duration as the contract writes `ANCHOR_INTERVAL`, in milliseconds. */
export function parseDurationSetting(value: string): number | null {
  const match = /^(\d+)(ms|s|m|h)$/.exec(value.trim());
  if (!match) return null;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] as 'ms' | 's' | 'm' | 'h'];
  return Number(match[1]) * unit;
}

/**
 * The audit-chain service signs checkpoints of the country's Merkle tree with its log key and cosigns
 * other logs' checkpoints with its witness key. Production sets both keys (C2SP signer keys,
 * `PRIVATE+KEY+<name>+<id>+<base64>`); development and tests derive stable keys from SUBJECT_REF_KEY.
 */
export class AuditChainEnvironment extends ServiceEnvironment {
  @IsOptional()
  @Matches(/^\d+(ms|s|m|h)$/, { message: 'ANCHOR_INTERVAL must be a duration such as 15m, 30s, 1h or 500ms' })
  ANCHOR_INTERVAL = '15m';

  /** The checkpoint origin line: a schema-less URL naming this country's log. Defaults to `<host of PUBLIC_BASE_URL or dcr.invalid>/audit/<cc>`. */
  @IsOptional()
  @Matches(/^[^\s+]{1,200}$/, { message: 'AUDIT_LOG_ORIGIN must be a schema-less URL without spaces or "+"' })
  AUDIT_LOG_ORIGIN?: string;

  @ValidateIf((env: AuditChainEnvironment) => env.NODE_ENV === 'production' || env.AUDIT_CHECKPOINT_KEY !== undefined)
  @IsString({ message: 'AUDIT_CHECKPOINT_KEY must be set in production (a C2SP Ed25519 signer key, PRIVATE+KEY+…)' })
  @Matches(/^PRIVATE\+KEY\+[^\s+]+\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+$/, { message: 'AUDIT_CHECKPOINT_KEY must be a C2SP signer key: PRIVATE+KEY+<name>+<key id>+<base64>' })
  AUDIT_CHECKPOINT_KEY?: string;

  @ValidateIf((env: AuditChainEnvironment) => env.NODE_ENV === 'production' || env.AUDIT_WITNESS_KEY !== undefined)
  @IsString({ message: 'AUDIT_WITNESS_KEY must be set in production (a C2SP Ed25519 signer key, PRIVATE+KEY+…)' })
  @Matches(/^PRIVATE\+KEY\+[^\s+]+\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+$/, { message: 'AUDIT_WITNESS_KEY must be a C2SP signer key: PRIVATE+KEY+<name>+<key id>+<base64>' })
  AUDIT_WITNESS_KEY?: string;

  /**
   * External witnesses speaking tlog-witness, besides the peer countries: a comma-separated list of
   * `<add-checkpoint URL> <witness verifier key>`.
   */
  @IsOptional()
  @Matches(/^\s*https?:\/\/\S+\s+\S+\+[0-9a-f]{8}\+\S+\s*(,\s*https?:\/\/\S+\s+\S+\+[0-9a-f]{8}\+\S+\s*)*$/, {
    message: 'AUDIT_EXTERNAL_WITNESSES must be a comma-separated list of "<add-checkpoint URL> <witness verifier key>"',
  })
  AUDIT_EXTERNAL_WITNESSES?: string;

  /** Where this country's witness answers tlog-witness add-checkpoint from outside, for the witness configuration document. */
  @IsOptional()
  @Transform(toPublicOrigin)
  @Matches(PUBLIC_ORIGIN, { message: 'PUBLIC_BASE_URL must be an http(s) origin without a path' })
  PUBLIC_BASE_URL?: string;
}

/**
 * The webhooks service keeps subscription secrets encrypted with WEBHOOK_SECRET_KEY (32 bytes, base64;
 * required in production, derived from SUBJECT_REF_KEY elsewhere) and delivers with the waits and
 * timeouts of the specification, which tests may shorten.
 */
export class WebhooksEnvironment extends ServiceEnvironment {
  @ValidateIf((env: WebhooksEnvironment) => env.NODE_ENV === 'production' || env.WEBHOOK_SECRET_KEY !== undefined)
  @IsString({ message: 'WEBHOOK_SECRET_KEY must be set in production (32 random bytes, base64)' })
  @Matches(/^[A-Za-z0-9+/]{43}=$/, { message: 'WEBHOOK_SECRET_KEY must be 32 bytes, base64 (openssl rand -base64 32)' })
  WEBHOOK_SECRET_KEY?: string;

  /** The waits before attempts 2 to 5. */
  @IsOptional()
  @Matches(/^\s*\d+(ms|s|m|h)\s*(,\s*\d+(ms|s|m|h)\s*){3}$/, { message: 'WEBHOOK_RETRY_WAITS must be four durations, such as 30s,2m,15m,1h' })
  WEBHOOK_RETRY_WAITS = '30s,2m,15m,1h';

  @IsOptional()
  @Matches(/^\d+(ms|s|m)$/, { message: 'WEBHOOK_CONNECT_TIMEOUT must be a duration such as 10s' })
  WEBHOOK_CONNECT_TIMEOUT = '10s';

  @IsOptional()
  @Matches(/^\d+(ms|s|m)$/, { message: 'WEBHOOK_READ_TIMEOUT must be a duration such as 15s' })
  WEBHOOK_READ_TIMEOUT = '15s';

  /**
   * How long a claimed delivery stays claimed: a worker that dies mid-delivery leaves it to another
   * (or to itself after a restart) once this has passed. Longer than connect + read timeouts.
   */
  @IsOptional()
  @Matches(/^\d+(ms|s|m)$/, { message: 'WEBHOOK_CLAIM_LEASE must be a duration such as 60s' })
  WEBHOOK_CLAIM_LEASE = '60s';

  /** Deliveries in flight at once per worker. */
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'WEBHOOK_CONCURRENCY must be an integer' })
  @Min(1, { message: 'WEBHOOK_CONCURRENCY must be at least 1' })
  @Max(1000, { message: 'WEBHOOK_CONCURRENCY must be at most 1000' })
  WEBHOOK_CONCURRENCY = 128;
}

export const DIRECTORY_CONFIRMATIONS = ['best_effort', 'required'] as const;
export type DirectoryConfirmation = (typeof DIRECTORY_CONFIRMATIONS)[number];

/**
 * The residency-router confirms every new person's entries with its peers before it homes them
 * (docs/architecture.md, Residency directory). What it does when a peer does not answer in time:
 * `best_effort` (the default) homes the person anyway and sends the entries as a sync event, so a
 * country's outage does not stop others recording new people; `required` refuses (503
 * `service_unavailable`), so no person is ever homed without every peer's agreement.
 */
export class ResidencyRouterEnvironment extends ServiceEnvironment {
  @IsOptional()
  @IsIn(DIRECTORY_CONFIRMATIONS as unknown as string[], { message: `DIRECTORY_CONFIRMATION must be one of ${DIRECTORY_CONFIRMATIONS.join(', ')}` })
  DIRECTORY_CONFIRMATION: DirectoryConfirmation = 'best_effort';

  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'DIRECTORY_CONFIRM_TIMEOUT_MS must be an integer' })
  @Min(100, { message: 'DIRECTORY_CONFIRM_TIMEOUT_MS must be at least 100' })
  @Max(60000, { message: 'DIRECTORY_CONFIRM_TIMEOUT_MS must be at most 60000' })
  DIRECTORY_CONFIRM_TIMEOUT_MS = 2000;
}

/**
 * The receipts service signs exported receipts with RECEIPT_SIGNING_KEY, a private JWK (ES256 or
 * EdDSA) as JSON; production requires it, development keeps one under `.data/` and tests may run with
 * a key made at start. Every public key used is kept with its validity window.
 */
export class ReceiptsEnvironment extends ServiceEnvironment {
  @ValidateIf((env: ReceiptsEnvironment) => env.NODE_ENV === 'production' || env.RECEIPT_SIGNING_KEY !== undefined)
  @IsString({ message: 'RECEIPT_SIGNING_KEY must be set in production (a private JWK, ES256 or EdDSA, as JSON)' })
  @Matches(/^\s*\{[\s\S]*"d"\s*:[\s\S]*\}\s*$/, { message: 'RECEIPT_SIGNING_KEY must be a private JWK (with "d") as JSON' })
  RECEIPT_SIGNING_KEY?: string;

  /**
   * The public origin receipts name (schema URL, withdrawal entry point); the country's gateway.
   * Required in production: every receipt of a person names its credential-free withdrawal entry.
   */
  @ValidateIf((env: ReceiptsEnvironment) => env.NODE_ENV === 'production' || env.PUBLIC_BASE_URL !== undefined)
  @IsString({ message: 'PUBLIC_BASE_URL must be set in production (receipts name the withdrawal entry on it)' })
  @Transform(toPublicOrigin)
  @Matches(PUBLIC_ORIGIN, { message: 'PUBLIC_BASE_URL must be an http(s) origin without a path' })
  PUBLIC_BASE_URL?: string;

  /** The platform processor as receipts name it. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  RECEIPT_PROCESSOR_NAME = 'Decision, Consent and Receipt Service';

  @IsOptional()
  @Matches(/^https:\/\/\S+$/, { message: 'RECEIPT_PROCESSOR_URL must be an https URL' })
  RECEIPT_PROCESSOR_URL?: string;
}

/** The gateway is the only service with a public port and per-application rate limits. */
export class GatewayEnvironment extends ServiceEnvironment {
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'PORT must be an integer' })
  @Min(0, { message: 'PORT must be between 0 and 65535' })
  @Max(65535, { message: 'PORT must be between 0 and 65535' })
  PORT = 8080;

  @IsOptional()
  @IsString()
  HOST = '0.0.0.0';

  /** The public base URL of this country's gateway, as clients reach it. */
  @IsOptional()
  @Transform(toPublicOrigin)
  @Matches(PUBLIC_ORIGIN, { message: 'PUBLIC_BASE_URL must be an http(s) origin without a path' })
  PUBLIC_BASE_URL?: string;

  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'RATE_LIMIT_RPS must be an integer' })
  @Min(0, { message: 'RATE_LIMIT_RPS must be 0 (off) or more' })
  RATE_LIMIT_RPS = 100;

  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'RATE_LIMIT_BURST must be an integer' })
  @Min(1, { message: 'RATE_LIMIT_BURST must be at least 1' })
  RATE_LIMIT_BURST = 200;

  /**
   * How many inbox sign-in codes one client address may ask for within an hour (the public inbox
   * sign-in, API and page, mails a code to any address it is given; each address gets at most 5 an
   * hour, and this keeps one client from mailing codes to address after address). A token bucket per
   * address (`request.ip`, read through TRUST_PROXY), per gateway process; 0 turns it off.
   */
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'SIGN_IN_CODES_PER_IP_PER_HOUR must be an integer' })
  @Min(0, { message: 'SIGN_IN_CODES_PER_IP_PER_HOUR must be 0 (off) or more' })
  SIGN_IN_CODES_PER_IP_PER_HOUR = 30;

  /**
   * Which peers are proxies whose `X-Forwarded-For`, `-Proto` and `-Host` are believed (the client's
   * address keys the form-builder hook's rate limit; the protocol decides the inbox cookie's
   * `Secure`): `loopback,linklocal,uniquelocal` by default (an ingress or load balancer on a private
   * address), a comma-separated list of addresses, CIDR ranges and those three names, `true` (every
   * peer: only behind a proxy that overwrites the headers) or `false` (none).
   */
  @IsOptional()
  @Matches(/^(true|false|(loopback|linklocal|uniquelocal|[0-9a-fA-F]*[.:][0-9a-fA-F.:]*(\/\d{1,3})?)(\s*,\s*(loopback|linklocal|uniquelocal|[0-9a-fA-F]*[.:][0-9a-fA-F.:]*(\/\d{1,3})?))*)$/, {
    message: 'TRUST_PROXY must be true, false, or a comma-separated list of addresses, CIDR ranges, loopback, linklocal and uniquelocal',
  })
  TRUST_PROXY = 'loopback,linklocal,uniquelocal';

  /**
   * Which requests get an access log line: `all`, or `errors` (4xx, 5xx and requests slower than one
   * second). Errors are always logged with their request id either way.
   */
  @IsOptional()
  @IsIn(['all', 'errors'], { message: 'ACCESS_LOG must be all or errors' })
  ACCESS_LOG: 'all' | 'errors' = 'all';

  /** Bootstrap credential for `POST /api/v1/applications`: an operator's admin token (stored hashed). */
  @IsOptional()
  @MinLength(32, { message: 'ADMIN_TOKEN must be at least 32 characters' })
  ADMIN_TOKEN?: string;

  /**
   * Signs the consent field's render proofs (HS256), which authenticate the field's captures: 32 bytes,
   * base64; required in production, derived from SUBJECT_REF_KEY elsewhere. Every gateway replica of
   * a country holds the same key; a new key only invalidates fields rendered before it (an hour at most).
   */
  @ValidateIf((env: GatewayEnvironment) => env.NODE_ENV === 'production' || env.FIELD_RENDER_PROOF_KEY !== undefined)
  @IsString({ message: 'FIELD_RENDER_PROOF_KEY must be set in production (32 random bytes, base64)' })
  @Matches(/^[A-Za-z0-9+/]{43}=$/, { message: 'FIELD_RENDER_PROOF_KEY must be 32 bytes, base64 (openssl rand -base64 32)' })
  FIELD_RENDER_PROOF_KEY?: string;

  /**
   * Signs the preview links of preview templates (HMAC-SHA256, ten minutes): 32 bytes, base64. Optional:
   * when unset it is derived from the render proof key (FIELD_RENDER_PROOF_KEY, which production
   * sets, else that key's own derivation from SUBJECT_REF_KEY), so every replica of a country agrees.
   * A new key only ends the preview links of the ten minutes before.
   */
  @IsOptional()
  @Matches(/^[A-Za-z0-9+/]{43}=$/, { message: 'TEMPLATE_PREVIEW_KEY must be 32 bytes, base64 (openssl rand -base64 32)' })
  TEMPLATE_PREVIEW_KEY?: string;
}

export class ConfigError extends Error {
  constructor(readonly variables: string[], message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

function describe(errors: ValidationError[]): { variables: string[]; lines: string[] } {
  const variables: string[] = [];
  const lines: string[] = [];
  for (const error of errors) {
    variables.push(error.property);
    const reasons = Object.values(error.constraints ?? {});
    lines.push(`  ${error.property}: ${reasons.join('; ') || 'invalid value'}`);
  }
  return { variables, lines };
}

/**
 * Reads and validates the environment into a typed configuration, or throws a ConfigError whose
 * message names every bad variable. Services call it first thing in `main`.
 */
export function loadConfig<T extends object>(
  shape: new () => T,
  env: Record<string, string | undefined> = process.env,
  serviceName = 'service',
): T {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const config = plainToInstance(shape, present, { exposeDefaultValues: true });
  const errors = validateSync(config, { forbidUnknownValues: false });
  if (errors.length > 0) {
    const { variables, lines } = describe(errors);
    throw new ConfigError(variables, `Invalid configuration for ${serviceName}:\n${lines.join('\n')}`);
  }
  return config;
}

/**
 * The subject prefix of a country: its lower-case code, after the optional deployment namespace.
 * Every NATS subject of that country starts with it, so countries never see each other's messages.
 */
export function subjectPrefix(country: string, namespace?: string): string {
  return namespace ? `${namespace}.${country.toLowerCase()}` : country.toLowerCase();
}
