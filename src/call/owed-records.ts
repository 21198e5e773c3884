import type { CallbackDelivery, CallbackRequest } from '../callbacks/index.js';
import { PeriodicSweep } from '../core/periodic-sweep.js';
import type { Scheduler } from '../core/scheduler.js';
import { LocalJournal } from '../state/local-journal.js';
import type { CallRecord, StreamRecord } from '../state/records.js';
import type { State } from '../state/state.js';

/** A record written when a call, a leg it placed or one of its streams ends. */
export type EndRecord =
  { kind: 'call'; record: CallRecord } | { kind: 'stream'; record: StreamRecord };

/**
 * What the journal holds: a record the store did not take, or a call's hangup callback that
 * waits for the call's record (or for its account's signing keys). Never a token: a callback is
 * signed when it is sent.
 */
type Owed = EndRecord | { kind: 'hangup'; call: string; request: CallbackRequest };

export interface OwedRecordsOptions {
  state: Pick<State, 'calls' | 'streams'>;
  callbacks: Pick<CallbackDelivery, 'sendSigned'>;
  /** The journal file (under the data directory); null keeps what is owed in memory only. */
  journalPath: string | null;
  scheduler: Scheduler;
  log: {
    info(object: object, message: string): void;
    warn(object: object, message: string): void;
  };
}

/** How often what is owed is tried again. */
const OWED_EVERY_MS = 1000;

/** Hangup callbacks sent at once by a sweep, in the order their calls ended. */
const CALLBACKS_AT_ONCE = 50;

/**
 * The records a call leaves when it ends (its own, those of the legs it placed, its streams')
 * and its hangup callback, which goes only once the call's record is written: an application
 * that fetches the call from its hangup_url finds it. What the store does not take is kept in a
 * journal on this node (on disk under the data directory) and written each second once the
 * store answers, in the order it was kept; then the hangup callbacks that waited go, each once.
 * A record is put under its own id (calls and streams claim no unique key), so one written
 * twice (a hung Redis ran the first write late) is still one record.
 */
export class OwedRecords {
  private readonly journal: LocalJournal<Owed>;
  private readonly sweep: PeriodicSweep;
  private draining: Promise<number> | null = null;
  /** Hangup callbacks sent outside a sweep, not yet answered. */
  private readonly sending = new Set<Promise<void>>();
  private lastError: string | null = null;

  constructor(private readonly options: OwedRecordsOptions) {
    this.journal = LocalJournal.open<Owed>(options.journalPath);
    this.sweep = new PeriodicSweep(
      () => this.drain(),
      options.scheduler,
      OWED_EVERY_MS,
      (error) => this.stillOwed(error),
    );
  }

  /** How many records and hangup callbacks wait for the store. */
  get owed(): number {
    return this.journal.size;
  }

  start(): void {
    this.sweep.start();
  }

  /** A last try at what is owed; what the store still refuses stays in the journal file. */
  async close(): Promise<void> {
    await Promise.allSettled(this.sending);
    await this.sweep.sweep();
    this.sweep.stop();
    this.journal.close();
  }

  /**
   * Writes `end`, then sends `hangup` (the call's hangup callback, when the record is a call's),
   * or keeps what could not go for a later sweep; never throws. While anything is owed a new
   * record waits behind it, so records reach the store in the order they were written.
   */
  async write(end: EndRecord, hangup?: CallbackRequest | null): Promise<void> {
    if (this.journal.size > 0) return this.keep(end, hangup);
    try {
      await this.put(end);
    } catch (error) {
      this.options.log.warn(
        { err: error, ...describe(end) },
        `the ${end.kind} record could not be written: kept on this node until the store takes it`,
      );
      return this.keep(end, hangup);
    }
    if (!hangup) return;
    const call = (end.record as CallRecord).call_uuid;
    const sent = this.sendHangup(call, hangup)
      .then((signed) => {
        if (!signed) this.journal.keep(hangupKey(call), { kind: 'hangup', call, request: hangup });
      })
      .finally(() => this.sending.delete(sent));
    this.sending.add(sent);
  }

  private keep(end: EndRecord, hangup?: CallbackRequest | null): void {
    this.journal.keep(recordKey(end), end);
    if (hangup) {
      const call = (end.record as CallRecord).call_uuid;
      this.journal.keep(hangupKey(call), { kind: 'hangup', call, request: hangup });
    }
  }

  /** One sweep at a time: a second caller gets the running one. */
  private drain(): Promise<number> {
    this.draining ??= this.writeOwed().finally(() => (this.draining = null));
    return this.draining;
  }

  /**
   * Writes the owed records, oldest first, stopping at the first the store refuses; then sends
   * the hangup callbacks whose record is written. Resolves with how many went.
   */
  private async writeOwed(): Promise<number> {
    let done = 0;
    const entries = this.journal.list();
    for (const [key, owed] of entries) {
      if (owed.kind === 'hangup') continue;
      await this.put(owed);
      this.journal.release(key);
      done++;
    }
    const due = entries.filter(
      ([, owed]) => owed.kind === 'hangup' && !this.journal.has(recordKey(owed)),
    );
    for (let k = 0; k < due.length; k += CALLBACKS_AT_ONCE) {
      const sent = await Promise.all(
        due.slice(k, k + CALLBACKS_AT_ONCE).map(([key, owed]) => this.sendOwed(key, owed)),
      );
      done += sent.filter(Boolean).length;
      if (sent.includes(false)) throw new Error('the signing keys of hangup callbacks are unread');
    }
    if (done > 0) {
      if (this.journal.size === 0) this.lastError = null;
      this.options.log.info(
        { written: done, owed: this.journal.size },
        'records and hangup callbacks of calls that ended while the store was away went',
      );
    }
    return done;
  }

  /**
   * Sends a hangup callback whose record is written: false when it could not be signed (its
   * account's keys could not be read), for it to be kept and sent later.
   */
  private async sendHangup(call: string, request: CallbackRequest): Promise<boolean> {
    const outcome = await this.options.callbacks.sendSigned(request).catch((error: Error) => {
      this.options.log.warn({ callUuid: call, reason: error.message }, 'callback failed');
      return 'failed' as const;
    });
    return outcome !== 'unsigned';
  }

  private async sendOwed(key: string, owed: Owed): Promise<boolean> {
    if (owed.kind !== 'hangup' || !(await this.sendHangup(owed.call, owed.request))) return false;
    this.journal.release(key);
    return true;
  }

  private put(end: EndRecord): Promise<void> {
    // create() puts the document under its id: the same record twice is one record.
    return end.kind === 'call'
      ? this.options.state.calls.create(end.record)
      : this.options.state.streams.create(end.record);
  }

  private stillOwed(error: Error): void {
    if (error.message === this.lastError) return;
    this.lastError = error.message;
    this.options.log.warn(
      { err: error.message, owed: this.journal.size },
      'the records of ended calls wait for the store',
    );
  }
}

function recordKey(owed: Owed): string {
  if (owed.kind === 'hangup') return `call:${owed.call}`;
  return owed.kind === 'call' ? `call:${owed.record.call_uuid}` : `stream:${owed.record.stream_id}`;
}

function hangupKey(call: string): string {
  return `hangup:${call}`;
}

function describe(end: EndRecord): Record<string, string> {
  return end.kind === 'call'
    ? { callUuid: end.record.call_uuid }
    : { streamId: end.record.stream_id, callUuid: end.record.call_uuid };
}
