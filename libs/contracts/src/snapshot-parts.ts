import { IsOptional, IsString, Length, Matches } from 'class-validator';

/**
 * A peer country's request for a snapshot (everything of a kind held here), answered in parts that
 * each fit one message on the bus (libs/service-kit snapshotPart): `after` is the key the last part
 * ended with.
 */
export class SnapshotPartRequest {
  /** The asking country, for logs. */
  @Matches(/^[A-Z]{2}$/)
  from_country: string;

  @IsOptional()
  @IsString()
  @Length(1, 200)
  after?: string;
}

/** What a part of a snapshot answers besides its items: the key to ask `after` while more follow. */
export interface SnapshotPartReply {
  next_after?: string;
}

/** A part of an application's list (webhook subscriptions, form connections) too long for one message: its items, and the key to ask `after` while more follow; the gateway pages the whole list as before. */
export interface ListPart<T> extends SnapshotPartReply {
  items: T[];
}
