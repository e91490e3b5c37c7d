import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsInt, IsISO8601, IsOptional, Matches, Max, Min, ValidateNested } from 'class-validator';

/**
 * residency-router: the cross-border directory. It holds only opaque keyed references (HMAC of a
 * person or resource reference), the home country and a status; nothing else crosses a border.
 */
export const RESIDENCY_LOCATE = 'residency-router.locate';
export const RESIDENCY_REGISTER = 'residency-router.register';
/** Where many people live, without homing anyone (an import's dry run). */
export const RESIDENCY_LOCATE_MANY = 'residency-router.locate-many';
export const RESIDENCY_REGISTER_MANY = 'residency-router.register-many';
export const RESIDENCY_CLAIM_NEW = 'residency-router.claim-new';
/**
 * Request from this country's decisions service after the write of new people it had homed failed:
 * the directory takes out the entries homed here that a claim inserted and nobody has relied on
 * since (a registration that found them homed here), and tells the peers (`directory.release`).
 */
export const RESIDENCY_RELEASE = 'residency-router.release';
/**
 * Event sent to peer countries' residency-routers with the claims this country released: each peer
 * deletes its copy of exactly that claim (reference, home country, time), and nothing else.
 */
export const RESIDENCY_DIRECTORY_RELEASE = 'residency-router.directory.release';
/**
 * Event sent to peer countries' residency-routers with entries they did not confirm (a peer that
 * did not answer `directory.confirm`) and entries rewritten to an earlier claim.
 */
export const RESIDENCY_DIRECTORY_SYNC = 'residency-router.directory.sync';
/**
 * Request to each peer country's residency-router when this country homes people none of whose
 * references it knew: the peer merges the entries by the directory's rule (the earlier claim wins,
 * ties to the lower country code) and answers what it holds then. A person is homed here only when
 * no peer answers an earlier claim of theirs, so two countries recording the same new person at
 * once agree on one home before either writes the person's data.
 */
export const RESIDENCY_DIRECTORY_CONFIRM = 'residency-router.directory.confirm';
/**
 * Request to a peer country's residency-router when a router starts: the entries homed in that peer,
 * a page at a time in reference order, so sync events lost while this country was down are made up.
 */
export const RESIDENCY_DIRECTORY_PULL = 'residency-router.directory.pull';

const REFERENCE = /^[0-9a-f]{64}$/;
export const DIRECTORY_STATUSES = ['active', 'erased'] as const;
export type DirectoryStatus = (typeof DIRECTORY_STATUSES)[number];

export class LocateRequest {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(16)
  @Matches(REFERENCE, { each: true, message: 'references must be 64 lower-case hex characters' })
  references: string[];
}

export class LocateReply {
  /** The first reference found, with where it lives; null when no reference is known anywhere. */
  entry: DirectoryEntryMessage | null;
}

export class RegisterRequest {
  /** The person's references that may already be in the directory (e-mail, external id), in order of preference. */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(16)
  @Matches(REFERENCE, { each: true, message: 'references must be 64 lower-case hex characters' })
  references: string[];

  /**
   * References the caller has just made: no one can have homed them yet, so the directory does not
   * look them up; they are homed with the person, here or nowhere. (A person's id needs none: it
   * names its home country itself, see `newSubjectId`; ids made before that have entries of this kind.)
   */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(16)
  @Matches(REFERENCE, { each: true, message: 'minted_references must be 64 lower-case hex characters' })
  minted_references?: string[];
}

/** Many people at once, each by their references (`locate`'s rule: the first reference found decides). */
export class LocateManyRequest {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => LocateRequest)
  people: LocateRequest[];
}

export class LocateManyReply {
  /** Per person, in the order asked: the home country, or null when none of their references is known. */
  homes: Array<string | null>;
}

/** Many people at once (imports): each person's references, homed as `register` would one by one. */
export class RegisterManyRequest {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => RegisterRequest)
  subjects: RegisterRequest[];
}

export class RegisterManyReply {
  /** Per person, in the order asked. */
  home_countries: string[];
}

/**
 * A person the caller may be recording for the first time, by the one reference that may be known
 * already (their e-mail address) and any references just made for them (see RegisterRequest).
 */
export class NewPersonClaim {
  @Matches(REFERENCE, { message: 'reference must be 64 lower-case hex characters' })
  reference: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(16)
  @Matches(REFERENCE, { each: true, message: 'minted_references must be 64 lower-case hex characters' })
  minted_references?: string[];
}

/**
 * `claim-new`: homes here, with any minted references, the people whose reference is in no
 * directory entry yet, and leaves everyone else alone (nothing written for them, not even a made
 * reference). A caller may ask this before it knows whether it has recorded the person already (the
 * Record API asks it while it looks for them; a batch with idempotency keys asks it right after, for
 * the people of the rows it will write), so it must not home a made reference for someone the
 * directory knows; it registers whoever was not claimed through `register-many` afterwards.
 */
export class ClaimNewRequest {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => NewPersonClaim)
  subjects: NewPersonClaim[];
}

export class ClaimNewReply {
  /** Per person, in the order asked: homed here by this call. */
  claimed: boolean[];
}

/**
 * `release`: references of new people whose write failed, none of whom is stored here (the caller
 * checked). Only an entry homed here, as its claim inserted it and relied on by no one since, goes.
 */
export class ReleaseRequest {
  /** A reference given n times is released by n parties (a request that registered the same person n times). */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(16000)
  @Matches(REFERENCE, { each: true, message: 'references must be 64 lower-case hex characters' })
  references: string[];
}

export class ReleaseReply {
  /** The references whose entries were taken out. */
  released: string[];
}

export class RegisterReply {
  /** Where the references are homed after the call: this country, unless one was homed elsewhere first. */
  home_country: string;
}

export class DirectoryEntryMessage {
  @Matches(REFERENCE)
  reference: string;

  @Matches(/^[A-Z]{2}$/)
  home_country: string;

  @IsIn(DIRECTORY_STATUSES as unknown as string[])
  status: DirectoryStatus;

  @IsISO8601({ strict: true })
  recorded_at: string;
}

export class DirectorySyncEvent {
  @IsArray()
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => DirectoryEntryMessage)
  entries: DirectoryEntryMessage[];
}

/**
 * `directory.release`: claims the sending country released (their people's write failed there), in
 * the sync event's shape; a peer deletes its copy of each, if it holds that very claim.
 */
export class DirectoryReleaseEvent extends DirectorySyncEvent {}

/** `directory.confirm`: the entries this country has just homed, for a peer to merge and answer. */
export class DirectoryConfirmRequest {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => DirectoryEntryMessage)
  entries: DirectoryEntryMessage[];
}

export class DirectoryConfirmReply {
  /** Per entry asked, in order: the entry the peer holds for its reference after merging it. */
  entries: DirectoryEntryMessage[];
}

/** `directory.pull`: a page of the entries homed in the answering country, after `after` in reference order. */
export class DirectoryPullRequest {
  @IsOptional()
  @Matches(REFERENCE, { message: 'after must be 64 lower-case hex characters' })
  after?: string;

  @IsInt()
  @Min(1)
  @Max(1000)
  limit: number;
}

export class DirectoryPullReply {
  /** Entries homed in the answering country, in reference order. */
  entries: DirectoryEntryMessage[];
  /** The `after` of the next page; null on the last one. */
  next: string | null;
}
