import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsISO8601,
  IsOptional,
  IsString,
  Length,
  Matches,
  Min,
  ValidateNested,
} from 'class-validator';
import { SnapshotPartReply, SnapshotPartRequest } from '../snapshot-parts';

/**
 * gateway → peer gateways: application configuration (not personal data) is authored in one
 * country and replicated whole to every other, so credentials and origins work at every endpoint.
 * Credentials travel only as hashes.
 */
export const CONFIG_APPLICATION_CHANGED = 'gateway.config.application-changed';
/**
 * The same snapshot as a request: the peer answers once it has stored and indexed it, so the country
 * where a change is made answers its caller only when every reachable peer holds the change (a token
 * made in one country works in the next at once, a revoked one is refused there at once). A peer that
 * does not answer in time is sent CONFIG_APPLICATION_CHANGED instead.
 */
export const CONFIG_APPLICATION_APPLY = 'gateway.config.application-apply';
/** Request for every application snapshot a country holds; a gateway asks its peers at boot. */
export const CONFIG_SNAPSHOT = 'gateway.config.snapshot';

export class ApiTokenSnapshot {
  @Matches(/^api_token_[0-9a-z]{16}$/)
  id: string;

  @IsOptional()
  @IsString()
  @Length(0, 200)
  name: string | null;

  @Matches(/^[0-9a-f]{64}$/)
  token_hash: string;

  @IsArray()
  @IsString({ each: true })
  scopes: string[];

  @IsISO8601({ strict: true })
  created_at: string;

  @IsOptional()
  @IsISO8601({ strict: true })
  revoked_at: string | null;
}

export class PublishableKeySnapshot {
  @IsString()
  @Length(1, 64)
  id: string;

  @Matches(/^[0-9a-f]{64}$/)
  key_hash: string;

  @IsString()
  @Length(1, 32)
  key_prefix: string;

  @IsISO8601({ strict: true })
  created_at: string;

  @IsOptional()
  @IsISO8601({ strict: true })
  revoked_at: string | null;
}

export class AllowedOriginSnapshot {
  @IsString()
  origin: string;

  @IsISO8601({ strict: true })
  created_at: string;

  /** Removed (and when): kept so that a removal reaches every country and is merged there. */
  @IsOptional()
  @IsISO8601({ strict: true })
  removed_at?: string | null;
}

export class ApplicationSettingsSnapshot {
  @IsBoolean()
  browser_commit: boolean;
}

export class ApplicationSnapshot {
  @Matches(/^tp_[a-z]{2,8}_[0-9a-z]{16}$/)
  id: string;

  @IsString()
  @Length(1, 64)
  account_id: string;

  @IsString()
  @Length(1, 200)
  name: string;

  @IsIn(['sandbox', 'production'])
  environment: 'sandbox' | 'production';

  @IsString()
  region: string;

  /** Country whose gateway authored the application. */
  @Matches(/^[A-Z]{2}$/)
  authored_in: string;

  /** Grows by one on every change; a replica ignores a snapshot older than the one it holds. */
  @IsInt()
  @Min(1)
  revision: number;

  /** Absent from a peer that predates settings: every setting off. */
  @IsOptional()
  @ValidateNested()
  @Type(() => ApplicationSettingsSnapshot)
  settings?: ApplicationSettingsSnapshot;

  @IsISO8601({ strict: true })
  created_at: string;

  @IsISO8601({ strict: true })
  updated_at: string;

  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => ApiTokenSnapshot)
  api_tokens: ApiTokenSnapshot[];

  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => PublishableKeySnapshot)
  publishable_keys: PublishableKeySnapshot[];

  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => AllowedOriginSnapshot)
  allowed_origins: AllowedOriginSnapshot[];
}

export class ConfigSnapshotRequest extends SnapshotPartRequest {}

/** CONFIG_APPLICATION_APPLY's answer: the snapshot is stored and in force at the peer. */
export interface ConfigApplyReply {
  applied: true;
}

export interface ConfigSnapshotReply extends SnapshotPartReply {
  applications: ApplicationSnapshot[];
}
