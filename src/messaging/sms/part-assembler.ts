import type { Scheduler, TimerHandle } from '../../core/scheduler.js';

export interface InboundPart {
  /** What groups the parts of one message besides the reference: sender and recipient. */
  key: string;
  reference: number;
  total: number;
  /** 1-based. */
  sequence: number;
  text: string;
}

export interface AssembledMessage {
  key: string;
  text: string;
  /** Parts the message was sent in. */
  parts: number;
  /** Sequence numbers that never arrived (the assembler gave up waiting). */
  missing: number[];
}

interface Group {
  total: number;
  texts: Map<number, string>;
  timer: TimerHandle;
}

/**
 * Joins the parts of concatenated inbound messages, in whatever order they arrive. A message
 * whose parts do not all arrive within the timeout is handed on with what came, and the gap
 * named.
 */
export class PartAssembler {
  private readonly groups = new Map<string, Group>();

  constructor(
    private readonly options: {
      scheduler: Scheduler;
      timeoutMs: number;
      onComplete(message: AssembledMessage): void;
    },
  ) {}

  get size(): number {
    return this.groups.size;
  }

  /** false when the part cannot belong to a message (sequence out of range). */
  add(part: InboundPart): boolean {
    if (part.total < 1 || part.sequence < 1 || part.sequence > part.total) return false;
    if (part.total === 1) {
      this.options.onComplete({ key: part.key, text: part.text, parts: 1, missing: [] });
      return true;
    }
    const id = `${part.key}|${part.reference}|${part.total}`;
    let group = this.groups.get(id);
    if (!group) {
      group = {
        total: part.total,
        texts: new Map(),
        timer: this.options.scheduler.after(this.options.timeoutMs, () =>
          this.complete(id, part.key),
        ),
      };
      this.groups.set(id, group);
    }
    if (!group.texts.has(part.sequence)) group.texts.set(part.sequence, part.text);
    if (group.texts.size === group.total) this.complete(id, part.key);
    return true;
  }

  private complete(id: string, key: string): void {
    const group = this.groups.get(id);
    if (!group) return;
    this.groups.delete(id);
    group.timer.cancel();
    let text = '';
    const missing: number[] = [];
    for (let sequence = 1; sequence <= group.total; sequence++) {
      const part = group.texts.get(sequence);
      if (part === undefined) missing.push(sequence);
      else text += part;
    }
    this.options.onComplete({ key, text, parts: group.total, missing });
  }
}
