import type { Clock } from '../core/clock.js';

/**
 * Failed authentications one source address may make within AUTH_FAILURE_WINDOW_MS; once it
 * has made them, its requests answer 429 without their credentials being checked until the
 * oldest of them is a window old. Enough for a client whose token was just rotated to notice;
 * far too few to guess a 40-character token.
 */
export const AUTH_FAILURE_LIMIT = 20;
export const AUTH_FAILURE_WINDOW_MS = 60_000;
/** Source addresses remembered at most; past that the oldest are forgotten first. */
const MAX_SOURCES = 10_000;

export interface AuthFailureSettings {
  limit: number;
  windowMs: number;
}

/**
 * Failed authentications per source address over a sliding window: the times of the last
 * `limit` failures of each address, so that no address gets more than `limit` tries in any
 * window, whatever the phase of its bursts. In memory on each node: with several nodes behind a
 * balancer, an address has `limit` tries per node. Successful requests neither count nor clear
 * the count (a valid account must not buy another's guesses).
 */
export class AuthFailures {
  private readonly sources = new Map<string, number[]>();

  constructor(
    private readonly clock: Clock,
    readonly settings: AuthFailureSettings = {
      limit: AUTH_FAILURE_LIMIT,
      windowMs: AUTH_FAILURE_WINDOW_MS,
    },
  ) {}

  /** Milliseconds until `source` may try again; 0 when it may now. */
  waitFor(source: string): number {
    const times = this.sources.get(source);
    if (!times || times.length < this.settings.limit) return 0;
    // The oldest of the last `limit` failures leaves the window first.
    return Math.max(0, times[0]! + this.settings.windowMs - this.clock.now());
  }

  /** Counts a failure of `source`; true when it is the one that reaches the limit. */
  failed(source: string): boolean {
    const now = this.clock.now();
    const recent = (this.sources.get(source) ?? []).filter(
      (at) => at > now - this.settings.windowMs,
    );
    // Requests in flight together were all let through before any of them failed.
    const reached = recent.length === this.settings.limit - 1;
    recent.push(now);
    if (recent.length > this.settings.limit) recent.shift();
    // Re-inserted, so that the Map's order is that of the last failure: the oldest go first.
    this.sources.delete(source);
    if (this.sources.size >= MAX_SOURCES) this.forgetOldest(now);
    this.sources.set(source, recent);
    return reached;
  }

  private forgetOldest(now: number): void {
    for (const [source, times] of this.sources) {
      const last = times[times.length - 1] ?? 0;
      if (this.sources.size >= MAX_SOURCES || last <= now - this.settings.windowMs)
        this.sources.delete(source);
      else break;
    }
  }
}
