import { LocalJournal } from '../state/local-journal.js';
import type { PartOutcome } from './carrier-network.js';

/** A message the carrier (or upstream) has answered, whose record still says queued. */
export interface SentEntry {
  account: string;
  message_uuid: string;
  carrier: string;
  /** Each part's answer, with the carrier's id of each part taken. */
  outcomes: PartOutcome[];
  at: number;
}

/**
 * What this node has handed to a carrier and not yet recorded. A send is entered the moment
 * the carrier answers, before any write to the store, and settled once its record is written:
 * a job run again for a message found here (its queue lock lapsed while Redis was away, or the
 * record write failed) records it and never sends it again. An entry whose record could not be
 * written is also kept in the local journal, so a restart still owes it to the store instead
 * of sending it twice.
 */
export class SentLedger {
  private readonly pending = new Map<string, SentEntry>();
  private readonly journal: LocalJournal<SentEntry>;

  constructor(journalPath: string | null) {
    this.journal = LocalJournal.open<SentEntry>(journalPath);
  }

  /** How many sends wait for their record to reach the store. */
  get owed(): number {
    return this.journal.size;
  }

  get(uuid: string): SentEntry | undefined {
    return this.pending.get(uuid) ?? this.journal.get(uuid);
  }

  sent(entry: SentEntry): void {
    this.pending.set(entry.message_uuid, entry);
  }

  /** Its record could not be written: kept on disk until it is. */
  unrecorded(uuid: string): void {
    const entry = this.pending.get(uuid);
    if (entry && !this.journal.has(uuid)) this.journal.keep(uuid, entry);
  }

  recorded(uuid: string): void {
    this.pending.delete(uuid);
    this.journal.release(uuid);
  }

  /** The sends whose record is owed to the store, oldest first. */
  unrecordedEntries(): SentEntry[] {
    return this.journal.list().map(([, entry]) => entry);
  }

  close(): void {
    this.journal.close();
  }
}
