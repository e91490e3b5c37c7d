/**
 * The SHA-256 of API tokens that authenticated recently, so that a client calling many times a
 * second is not hashed again on every request: on `GET /api/v1/me` the hash was the largest single
 * item of the gateway's own work (about 3 µs of a request, in a V8 profile; docs/performance.md).
 *
 * It maps a token to its hash, nothing more: whether the hash still names a live token is asked of
 * the credential index on every request, so a revoked or rotated token is refused at once. What it
 * costs is that the raw tokens of recent callers stay in the gateway's memory a little longer than
 * the request that carried them (which holds them anyway). So it is bounded both ways:
 * - only tokens that were valid are remembered (a caller guessing tokens fills nothing);
 * - at most `capacity` tokens (when full, all are dropped and it starts again);
 * - nothing older than `maxAgeMs`: everything is dropped once that long has passed since it last
 *   started empty, checked on every read.
 * Nothing is ever written anywhere; the database keeps hashes only, as before.
 */
export class RecentTokenHashes {
  private readonly hashes = new Map<string, string>();
  private startedAt: number;

  constructor(
    private readonly capacity = 1024,
    private readonly maxAgeMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {
    this.startedAt = now();
  }

  /** The remembered hash of this token, if it authenticated within the last `maxAgeMs`. */
  get(token: string): string | undefined {
    if (this.hashes.size === 0) return undefined;
    if (this.now() - this.startedAt >= this.maxAgeMs) {
      this.forget();
      return undefined;
    }
    return this.hashes.get(token);
  }

  /** Remembers the hash of a token that has just authenticated. */
  remember(token: string, hash: string): void {
    if (this.hashes.size === 0) this.startedAt = this.now();
    else if (this.hashes.size >= this.capacity) this.forget();
    this.hashes.set(token, hash);
  }

  /** Drops one token (its hash no longer names a live token). */
  drop(token: string): void {
    this.hashes.delete(token);
  }

  forget(): void {
    this.hashes.clear();
    this.startedAt = this.now();
  }

  get size(): number {
    return this.hashes.size;
  }
}
