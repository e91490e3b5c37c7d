export interface RateLimitDecision {
  allowed: boolean;
  /** The bucket size (burst): the most requests that can be made at once. */
  limit: number;
  /** Whole tokens left after this request. */
  remaining: number;
  /** 0 when allowed; otherwise whole seconds (≥ 1) until one token is available again. */
  retryAfterSeconds: number;
  /** Whole seconds until the bucket is full again (`remaining` back at `limit`); 0 when it is full. */
  resetSeconds: number;
}

export interface TokenBucketOptions {
  /** Tokens added per second, continuously. 0 turns limiting off (every request is allowed). */
  ratePerSecond: number;
  /** Bucket size: a new or idle key may make this many requests at once. Integer ≥ 1. */
  burst: number;
  /** Clock in milliseconds; `Date.now` by default. */
  now?: () => number;
  /** Most keys tracked at once (default 100,000); beyond it the least recently used key is dropped. */
  maxKeys?: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export const DEFAULT_MAX_KEYS = 100_000;

/**
 * A token bucket per key (the application id), refilled continuously at `ratePerSecond` up to
 * `burst`. In memory, so the limit holds per process.
 *
 * Memory is bounded: buckets live in a Map in least-recently-used order, and taking a new key
 * beyond `maxKeys` drops the least recently used ones. Dropping a bucket is forgetting it, i.e.
 * treating the key as idle (a full bucket), so the worst case for a dropped key is one extra burst;
 * with the default 100k keys that only happens under a key-spraying flood, where the oldest keys are
 * also the most likely to have refilled anyway.
 */
export class TokenBucketLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly rate: number;
  private readonly burst: number;
  private readonly now: () => number;
  private readonly maxKeys: number;
  /** The key at the most-recent end of `buckets`. */
  private mostRecentKey: string | undefined;

  constructor(opts: TokenBucketOptions) {
    if (!Number.isFinite(opts.ratePerSecond) || opts.ratePerSecond < 0) {
      throw new RangeError(`ratePerSecond must be a finite number ≥ 0, got ${opts.ratePerSecond}`);
    }
    if (!Number.isInteger(opts.burst) || opts.burst < 1) {
      throw new RangeError(`burst must be an integer ≥ 1, got ${opts.burst}`);
    }
    const maxKeys = opts.maxKeys ?? DEFAULT_MAX_KEYS;
    if (!Number.isInteger(maxKeys) || maxKeys < 1) throw new RangeError(`maxKeys must be an integer ≥ 1, got ${maxKeys}`);
    this.rate = opts.ratePerSecond;
    this.burst = opts.burst;
    this.now = opts.now ?? Date.now;
    this.maxKeys = maxKeys;
  }

  /** Number of keys currently tracked. */
  get size(): number {
    return this.buckets.size;
  }

  /** Spends one token of `key`'s bucket if there is one. */
  take(key: string): RateLimitDecision {
    if (this.rate === 0) {
      return { allowed: true, limit: this.burst, remaining: this.burst, retryAfterSeconds: 0, resetSeconds: 0 };
    }
    const now = this.now();
    const bucket = this.buckets.get(key);
    let tokens: number;
    let at = now;
    if (bucket === undefined) {
      tokens = this.burst;
    } else {
      // A bucket's time never runs backwards: after the clock steps back, nothing refills until it
      // has caught up again, so an oscillating clock cannot bank refills twice.
      at = Math.max(now, bucket.at);
      const elapsedMs = at - bucket.at;
      tokens = Math.min(this.burst, snap(bucket.tokens + (elapsedMs * this.rate) / 1000));
    }

    const allowed = tokens >= 1;
    if (allowed) tokens -= 1;
    if (bucket !== undefined && key === this.mostRecentKey) {
      // Already at the most-recent end (the common case: one busy application): updated in place.
      bucket.tokens = tokens;
      bucket.at = at;
    } else {
      if (bucket !== undefined) this.buckets.delete(key); // re-inserted: moves the key to the most-recent end
      this.buckets.set(key, { tokens, at });
      this.mostRecentKey = key;
      if (this.buckets.size > this.maxKeys) this.evict();
    }

    // Waits count from the bucket's time, which is ahead of `now` only after the clock stepped back.
    const aheadSeconds = (at - now) / 1000;
    return {
      allowed,
      limit: this.burst,
      remaining: Math.floor(tokens),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(aheadSeconds + (1 - tokens) / this.rate)),
      resetSeconds: Math.ceil(aheadSeconds + (this.burst - tokens) / this.rate),
    };
  }

  private evict(): void {
    for (const key of this.buckets.keys()) {
      if (this.buckets.size <= this.maxKeys) return;
      this.buckets.delete(key);
    }
  }
}

/**
 * Rounds to a billionth of a token so that float drift from many small refills (0.1 + 0.1 + …) does
 * not leave a bucket at 0.9999999999999999 when it holds exactly one token.
 */
const snap = (tokens: number): number => Math.round(tokens * 1e9) / 1e9;
