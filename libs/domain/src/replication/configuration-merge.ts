/**
 * How two countries' copies of one application's configuration are merged when a peer's snapshot
 * arrives (the gateway's ConnectRepository.applySnapshot does the reading and writing). The rules
 * make the merge order-free, so countries that changed the application at the same moment converge
 * whatever arrives first:
 * - credentials (API tokens, publishable keys) are only ever added and revoked: every one either
 *   side has is kept, and revoked if either side revoked it, at the earlier revocation time;
 * - an allowed origin is added and removed: per origin, the later change wins (its removal time,
 *   else its addition time); at equal times the removal, then the later addition.
 * Each merge also says whether this side holds something the peer's copy lacks (`peerBehind`), so
 * the caller can send its state back.
 */

export interface RevocableCredential {
  id: string;
  revokedAt: Date | null;
}

export interface CredentialMerge {
  /** The peer's credentials this side does not have. */
  added: string[];
  /** Credentials this side has that the peer revoked (earlier, or only there), with the time to keep. */
  revoked: Array<{ id: string; revokedAt: Date }>;
  peerBehind: boolean;
}

export function mergeCredentials(here: readonly RevocableCredential[], there: readonly RevocableCredential[]): CredentialMerge {
  const ours = new Map(here.map((credential) => [credential.id, credential]));
  const theirs = new Map(there.map((credential) => [credential.id, credential]));
  const added: string[] = [];
  const revoked: Array<{ id: string; revokedAt: Date }> = [];
  for (const credential of there) {
    const own = ours.get(credential.id);
    if (!own) added.push(credential.id);
    else if (credential.revokedAt !== null && revokedLater(own.revokedAt, credential.revokedAt)) revoked.push({ id: credential.id, revokedAt: credential.revokedAt });
  }
  const peerBehind = here.some((credential) => {
    const theirCopy = theirs.get(credential.id);
    return !theirCopy || (credential.revokedAt !== null && revokedLater(theirCopy.revokedAt, credential.revokedAt));
  });
  return { added, revoked, peerBehind };
}

/** Whether `current` (null: not revoked) is to give way to a revocation at `other`. */
function revokedLater(current: Date | null, other: Date): boolean {
  return current === null || other < current;
}

export interface OriginState {
  origin: string;
  createdAt: Date;
  removedAt: Date | null;
}

export interface OriginMerge {
  /** The peer's states to store here (each replacing this side's state of that origin). */
  take: OriginState[];
  peerBehind: boolean;
}

export function mergeOrigins(here: readonly OriginState[], there: readonly OriginState[]): OriginMerge {
  const ours = new Map(here.map((state) => [state.origin, state]));
  const theirs = new Map(there.map((state) => [state.origin, state]));
  const take = there.filter((state) => {
    const own = ours.get(state.origin);
    return !own || supersedes(state, own);
  });
  const peerBehind = here.some((state) => {
    const theirCopy = theirs.get(state.origin);
    return !theirCopy || supersedes(state, theirCopy);
  });
  return { take, peerBehind };
}

/**
 * Whether origin state `a` is a later change than `b`: by the change's time, then a removal over an
 * addition, then the later addition (so that two removals at one moment converge too).
 */
function supersedes(a: OriginState, b: OriginState): boolean {
  const at = (state: OriginState) => (state.removedAt ?? state.createdAt).getTime();
  if (at(a) !== at(b)) return at(a) > at(b);
  if ((a.removedAt === null) !== (b.removedAt === null)) return a.removedAt !== null;
  return a.createdAt.getTime() > b.createdAt.getTime();
}
