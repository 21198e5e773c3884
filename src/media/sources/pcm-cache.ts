import type { Pcm } from './wav.js';

/**
 * Rendered or decoded audio, kept by key up to a size in octets; the least recently used goes
 * first. Concurrent asks for one key share one production; a failed one is forgotten.
 */
export class PcmCache {
  private readonly entries = new Map<string, Promise<Pcm>>();
  private readonly sizes = new Map<string, number>();
  private bytes = 0;
  /** Productions started (cache misses). */
  misses = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string, produce: () => Promise<Pcm>): Promise<Pcm> {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    this.misses++;
    const pending = produce();
    this.entries.set(key, pending);
    pending.then(
      (pcm) => this.account(key, pcm.samples.byteLength),
      () => this.entries.delete(key),
    );
    return pending;
  }

  private account(key: string, size: number): void {
    if (!this.entries.has(key)) return;
    this.sizes.set(key, size);
    this.bytes += size;
    for (const old of this.entries.keys()) {
      if (this.bytes <= this.maxBytes || old === key) break;
      const oldSize = this.sizes.get(old);
      if (oldSize === undefined) continue; // still being produced
      this.entries.delete(old);
      this.sizes.delete(old);
      this.bytes -= oldSize;
    }
  }
}
