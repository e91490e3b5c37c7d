import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsISO8601,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { APPLICATION_ID } from '../patterns';

/**
 * audit-chain: the country's tamper-evident trail. Producers append from their outboxes (request/
 * reply, so an event is marked sent only once its entry is committed; a redelivered event is
 * recognised by its id and not appended twice); the gateway reads entries, exports, anchors and
 * proofs; peer countries' audit-chain services ask this one to cosign their checkpoints.
 */
export const AUDIT_APPEND = 'audit-chain.append';
export const AUDIT_LIST = 'audit-chain.list';
export const AUDIT_EXPORT = 'audit-chain.export';
export const AUDIT_ANCHORS = 'audit-chain.anchors';
export const AUDIT_INCLUSION_PROOF = 'audit-chain.proofs.inclusion';
export const AUDIT_CONSISTENCY_PROOF = 'audit-chain.proofs.consistency';
export const AUDIT_WITNESS_CONFIGURATION = 'audit-chain.witness-configuration';
/** tlog-witness `add-checkpoint`, carried over the transport for peer countries (a checkpoint holds no personal data). */
export const AUDIT_WITNESS_ADD_CHECKPOINT = 'audit-chain.witness.add-checkpoint';
/** Signs and distributes a checkpoint now instead of at the next interval (operators, tests). */
export const AUDIT_ANCHOR_NOW = 'audit-chain.anchor-now';

export const AUDIT_ACTOR_TYPES = ['application', 'participant', 'host', 'system', 'operator', 'agent'] as const;

export class AuditActor {
  @IsIn(AUDIT_ACTOR_TYPES as unknown as string[])
  type: (typeof AUDIT_ACTOR_TYPES)[number];

  @IsOptional()
  @IsString()
  @Length(1, 200)
  id?: string;
}

export class AuditEventInput {
  /** The producer's event id: appending the same id twice yields one entry. */
  @Matches(/^[a-z]{2,8}_[0-9A-Za-z_-]{8,64}$/)
  id: string;

  @Matches(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/)
  @Length(3, 80)
  type: string;

  @Matches(APPLICATION_ID)
  application_id: string;

  @ValidateNested()
  @Type(() => AuditActor)
  actor: AuditActor;

  @IsISO8601({ strict: true })
  occurred_at: string;

  @IsObject()
  payload: Record<string, unknown>;
}

export class AuditAppendRequest {
  @Matches(/^[a-z][a-z-]{1,30}$/)
  source: string;

  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => AuditEventInput)
  events: AuditEventInput[];
}

export interface AuditAppendReply {
  /** Entries created by this call (events already on the trail are not counted again). */
  appended: number;
  entries: Array<{ event_id: string; entry_id: string; leaf_index: number }>;
}

/** One entry as the contract fixes it; `hash` is SHA-256 of the RFC 8785 bytes of the other seven fields. */
export interface AuditEntryMessage {
  seq: number;
  entry_id: string;
  event_type: string;
  actor: { type: string; id?: string };
  occurred_at: string;
  payload_digest: string;
  prev_hash: string;
  hash: string;
}

export class AuditListRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  types?: string[];

  @IsOptional()
  @IsISO8601({ strict: true })
  from?: string;

  @IsOptional()
  @IsISO8601({ strict: true })
  to?: string;

  /** Entries with a seq greater than this (the cursor of the page before). */
  @IsOptional()
  @IsInt()
  @Min(0)
  after_seq?: number;

  @IsInt()
  @Min(1)
  @Max(1000)
  limit: number;
}

export interface AuditListReply {
  entries: AuditEntryMessage[];
  has_more: boolean;
}

export class AuditExportRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  /**
   * A later part of an export (a whole trail is more than one message on the bus carries): the
   * entries after this `seq`, as many as fit one message (`next_after_seq` while any are left).
   */
  @IsOptional()
  @IsInt()
  @Min(0)
  after_seq?: number;

  /**
   * With `after_seq`: the tree size of the anchor the first part answered (0 for none), so that every
   * part's inclusion proofs are against that one anchor; the later parts answer no anchor.
   */
  @IsOptional()
  @IsInt()
  @Min(0)
  tree_size?: number;
}

export interface AuditWitnessReceiptMessage {
  /** The witness's key name. */
  witness: string;
  /** Base64 of the cosignature/v1 signature bytes: key id (4) ‖ timestamp (8, big-endian) ‖ Ed25519 signature (64). */
  signature: string;
  signed_at: string;
  /** The whole C2SP signature line, as the witness sent it. */
  cosignature: string;
}

export interface AuditAnchorMessage {
  id: string;
  country: string;
  origin: string;
  merkle_root: string;
  tree_size: number;
  created_at: string;
  /** The C2SP signed note (tlog-checkpoint body, the log's signature and the witnesses' cosignatures). */
  checkpoint: string;
  witness_receipts: AuditWitnessReceiptMessage[];
}

export interface AuditInclusionMessage {
  entry_id: string;
  leaf_index: number;
  tree_size: number;
  /** Lower-case hex hashes, leaf to root. */
  proof: string[];
}

export interface AuditExportReply {
  application_id: string;
  country: string;
  hash_rule: string;
  leaf_rule: string;
  entries: AuditEntryMessage[];
  /** The newest anchor, and for every entry it covers an inclusion proof against its root. */
  anchor: AuditAnchorMessage | null;
  inclusion_proofs: AuditInclusionMessage[];
}

/** One part of an export (AuditExportRequest.after_seq): the gateway puts the parts together. */
export type AuditExportPart = AuditExportReply & { next_after_seq?: number };

export class AuditAnchorsRequest {
  @IsOptional()
  @Matches(/^anc_[0-9a-z]{16,32}$/)
  before?: string;

  @IsInt()
  @Min(1)
  @Max(200)
  limit: number;
}

export interface AuditAnchorsReply {
  anchors: AuditAnchorMessage[];
  has_more: boolean;
}

export class AuditInclusionRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  @Matches(/^aud_[0-9a-z]{16,32}$/)
  entry_id: string;

  /** The tree size (an anchor's) to prove against; defaults to the newest anchor. */
  @IsOptional()
  @IsInt()
  @Min(1)
  tree_size?: number;
}

export class AuditConsistencyRequest {
  @IsInt()
  @Min(1)
  from_size: number;

  @IsInt()
  @Min(1)
  to_size: number;
}

export interface AuditConsistencyMessage {
  from_size: number;
  to_size: number;
  from_root: string;
  to_root: string;
  proof: string[];
}

export interface PublishedKeyMessage {
  /** The C2SP verifier key (`<name>+<key id>+<base64 key>`). */
  verifier_key: string;
  name: string;
  key_id: string;
  algorithm: 'ed25519' | 'cosignature/v1';
  status: 'current' | 'retired';
  first_used_at: string;
  retired_at: string | null;
}

export interface WitnessConfigurationMessage {
  country: string;
  log: { origin: string; checkpoint_keys: PublishedKeyMessage[] };
  witness: { name: string; cosignature_keys: PublishedKeyMessage[]; add_checkpoint_url: string | null };
  anchor_interval_seconds: number;
  witnesses: Array<{ name: string; verifier_key: string | null; url: string | null; kind: 'peer' | 'external' }>;
}

/** The sizes of a tlog-witness request body the gateway passes on (anything else is answered 400 there). */
export const WITNESS_REQUEST_MIN = 10;
export const WITNESS_REQUEST_MAX = 64 * 1024;

export class WitnessAddCheckpointRequest {
  /** The tlog-witness request body, verbatim. */
  @IsString()
  @Length(WITNESS_REQUEST_MIN, WITNESS_REQUEST_MAX)
  body: string;
}

/** The tlog-witness answer: 200 with cosignature lines, or one of its error statuses and a plain body. */
export interface WitnessAddCheckpointReply {
  status: 200 | 400 | 403 | 404 | 409 | 422;
  content_type: string;
  body: string;
}
