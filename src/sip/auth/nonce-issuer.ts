import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../core/clock.js';

export type NonceCheck = 'fresh' | 'stale' | 'forged';

/**
 * Nonces that carry their own issue time and an HMAC over it, so any node sharing the secret
 * can tell a nonce it issued (and how old it is) without storing it. Layout, base64url:
 *   8 bytes issue time (ms) | 8 random bytes | 16 bytes HMAC-SHA256(secret, first 16 bytes)
 * Replay protection (RFC 7616 3.3, nonce-count) needs memory of the highest nc seen per nonce;
 * that is kept here for the nonce's lifetime and bounded in size.
 */
export class NonceIssuer {
  private readonly counts = new Map<string, { nc: number; expires: number }>();

  constructor(
    private readonly secret: Buffer,
    private readonly clock: Clock,
    private readonly lifetimeMs = 5 * 60_000,
    private readonly maxTracked = 100_000,
  ) {}

  issue(): string {
    const head = Buffer.alloc(16);
    head.writeBigUInt64BE(BigInt(Math.floor(this.clock.now())), 0);
    randomBytes(8).copy(head, 8);
    return Buffer.concat([head, this.mac(head)]).toString('base64url');
  }

  check(nonce: string): NonceCheck {
    const raw = Buffer.from(nonce, 'base64url');
    if (raw.length !== 32 || raw.toString('base64url') !== nonce) return 'forged';
    const head = raw.subarray(0, 16);
    if (!timingSafeEqual(raw.subarray(16), this.mac(head))) return 'forged';
    const issued = Number(head.readBigUInt64BE(0));
    const age = this.clock.now() - issued;
    return age < 0 || age > this.lifetimeMs ? 'stale' : 'fresh';
  }

  /**
   * Records a nonce-count for a fresh nonce; false if it is not above every count already seen
   * with that nonce (a replayed or reordered request).
   */
  acceptCount(nonce: string, nc: number): boolean {
    const now = this.clock.now();
    const seen = this.counts.get(nonce);
    if (seen && seen.expires > now && nc <= seen.nc) return false;
    if (this.counts.size >= this.maxTracked) this.sweep(now);
    this.counts.set(nonce, { nc, expires: now + this.lifetimeMs });
    return true;
  }

  private sweep(now: number): void {
    for (const [nonce, entry] of this.counts) if (entry.expires <= now) this.counts.delete(nonce);
    // Still full of live nonces (a flood): drop the oldest (Map keeps insertion order). A replay
    // of an evicted nonce would pass the count check, so maxTracked is sized far above the
    // nonces live clients use; the bound is what keeps a flood from growing memory.
    for (const nonce of this.counts.keys()) {
      if (this.counts.size < this.maxTracked) break;
      this.counts.delete(nonce);
    }
  }

  private mac(head: Buffer): Buffer {
    return createHmac('sha256', this.secret).update(head).digest().subarray(0, 16);
  }
}
