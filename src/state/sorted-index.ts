import type { PageQuery } from './document-store.js';

/**
 * Members ordered by (score, id), as a Redis sorted set orders them; a range query costs a
 * binary search plus the page it returns.
 */
export class SortedIndex {
  private readonly scores = new Map<string, number>();
  private ordered: { id: string; score: number }[] = [];

  set(id: string, score: number): void {
    const current = this.scores.get(id);
    if (current === score) return;
    if (current !== undefined) this.delete(id);
    this.scores.set(id, score);
    this.ordered.splice(this.position(score, id), 0, { id, score });
  }

  delete(id: string): void {
    const score = this.scores.get(id);
    if (score === undefined) return;
    this.scores.delete(id);
    this.ordered.splice(this.position(score, id), 1);
  }

  /** Every (id, score), in no order; safe to iterate while the index changes. */
  members(): IterableIterator<[string, number]> {
    return this.scores.entries();
  }

  range(query: PageQuery): { ids: string[]; total: number } {
    const min = query.scoreMin ?? -Infinity;
    const max = query.scoreMax ?? Infinity;
    const start = this.position(min, '');
    let end = this.position(max, '\uffff');
    // position() finds the first slot after (max, '\uffff'); ids are ASCII so that bounds them.
    end = Math.max(start, end);
    const total = end - start;
    const from = query.offset;
    const count = query.limit === 0 ? total : query.limit;
    const ids: string[] = [];
    for (let k = from; k < Math.min(total, from + count); k++) {
      const entry = query.ascending ? this.ordered[start + k] : this.ordered[end - 1 - k];
      if (entry) ids.push(entry.id);
    }
    return { ids, total };
  }

  /** First position whose (score, id) is not below the given pair. */
  private position(score: number, id: string): number {
    let lo = 0;
    let hi = this.ordered.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const e = this.ordered[mid]!;
      if (e.score < score || (e.score === score && e.id < id)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
