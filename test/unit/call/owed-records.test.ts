import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RateDeck } from '../../../src/call/billing/rate-deck.js';
import { buildCallRecord } from '../../../src/call/call-record.js';
import { OwedRecords } from '../../../src/call/owed-records.js';
import type { CallbackRequest } from '../../../src/callbacks/index.js';
import { StoreUnavailable } from '../../../src/core/errors.js';
import { ManualScheduler } from '../../../src/core/scheduler.js';
import type { DocumentEntry, DocumentStore } from '../../../src/state/document-store.js';
import { EmbeddedStore } from '../../../src/state/embedded-store.js';
import type { CallRecord, StreamRecord } from '../../../src/state/records.js';
import { createState, type State } from '../../../src/state/state.js';

const ACCOUNT = 'MAAAAAAAAAAAAAAAAAAA';
const T0 = Date.UTC(2026, 0, 5, 10, 0, 0);
const deck = RateDeck.parse('prefix,rate_per_minute,description\nsip,0.00300,SIP');

/**
 * A store that is up, away (every write fails and changes nothing) or hung (a write runs but
 * its answer never comes back in time, as a stopped Redis runs it once it wakes).
 */
class FlakyStore implements DocumentStore {
  mode: 'up' | 'down' | 'late' = 'up';
  private readonly inner = new EmbeddedStore(null);
  get: DocumentStore['get'] = (...args) => this.inner.get(...args);
  page: DocumentStore['page'] = (...args) => this.inner.page(...args);
  findUnique: DocumentStore['findUnique'] = (key) => this.inner.findUnique(key);
  remove: DocumentStore['remove'] = (...args) => this.inner.remove(...args);
  swap: DocumentStore['swap'] = (...args) => this.inner.swap(...args);
  durable = () => this.inner.durable();
  close = () => this.inner.close();

  async put(
    kind: string,
    tenant: string,
    id: string,
    doc: unknown,
    entry: DocumentEntry,
    previous?: DocumentEntry,
  ): Promise<void> {
    if (this.mode === 'down') throw new StoreUnavailable('connection refused');
    await this.inner.put(kind, tenant, id, doc, entry, previous);
    if (this.mode === 'late') throw new StoreUnavailable('timed out');
  }
}

/** The client's end of the hangup callbacks, and whether the account's keys can be read. */
class Callbacks {
  keys: 'readable' | 'unreadable' = 'readable';
  /** Each callback sent, with whether its call's record was in the store when it went. */
  readonly sent: { call: string; recorded: boolean }[] = [];

  constructor(private readonly state: State) {}

  async sendSigned(request: CallbackRequest): Promise<'delivered' | 'unsigned'> {
    if (this.keys === 'unreadable') return 'unsigned';
    const call = request.params.CallUUID!;
    this.sent.push({ call, recorded: (await this.state.calls.get(ACCOUNT, call)) !== null });
    return 'delivered';
  }
}

function callRecord(n: number, parent: string | null = null): CallRecord {
  return {
    ...buildCallRecord(
      {
        callUuid: `00000000-0000-4000-8000-00000000000${n}`,
        requestUuid: null,
        direction: 'outbound',
        from: '+14155550100',
        to: 'sip:alice@example.com',
        initiatedAt: T0 + n * 1000,
        answeredAt: T0 + n * 1000 + 500,
        endedAt: T0 + n * 1000 + 30_000,
        hangupCauseCode: 4000,
        hangupCauseName: 'Normal Hangup',
        hangupSource: 'Callee',
        parentCallUuid: parent,
        sourceIp: '127.0.0.1',
        account: ACCOUNT,
        subaccount: null,
      },
      deck,
    ),
    conversion: null,
  };
}

function streamRecord(call: CallRecord): StreamRecord {
  return {
    account: ACCOUNT,
    subaccount: null,
    created: T0,
    stream_id: `stream-of-${call.call_uuid}`,
    call_uuid: call.call_uuid,
    service_url: 'wss://ai.example.com/s',
    bidirectional: false,
    audio_track: 'inbound',
    content_type: 'audio/x-l16;rate=8000',
    start_time: '2026-01-05 10:00:01+00:00',
    end_time: '2026-01-05 10:00:20+00:00',
    bill_duration: 19,
    rounded_bill_duration: 60,
    billed_amount: '0.00300',
    status: 'stopped',
  };
}

const hangupOf = (call: CallRecord): CallbackRequest => ({
  url: 'https://app.example.com/hangup',
  method: 'POST',
  accountId: ACCOUNT,
  params: { CallUUID: call.call_uuid, Event: 'Hangup', Duration: String(call.call_duration) },
});

const quiet = { info: () => undefined, warn: () => undefined };

/** Lets every pending promise of a sweep settle (the stores here answer without I/O). */
async function settle(): Promise<void> {
  for (let k = 0; k < 50; k++) await new Promise((resolve) => setImmediate(resolve));
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function setup(journalPath: string | null = null, store = new FlakyStore()) {
  const time = new ManualScheduler(T0);
  const state = createState(store);
  const callbacks = new Callbacks(state);
  const records = new OwedRecords({ state, callbacks, journalPath, scheduler: time, log: quiet });
  records.start();
  await settle();
  const count = async () => (await state.calls.page(ACCOUNT, { offset: 0, limit: 0 })).total;
  return { time, store, state, callbacks, records, count };
}

describe('OwedRecords', () => {
  it('writes a record and then sends its hangup callback while the store answers', async () => {
    const { records, callbacks, state } = await setup();
    const call = callRecord(1);
    await records.write({ kind: 'call', record: call }, hangupOf(call));
    await settle();
    expect(await state.calls.get(ACCOUNT, call.call_uuid)).toEqual(call);
    expect(callbacks.sent).toEqual([{ call: call.call_uuid, recorded: true }]);
    expect(records.owed).toBe(0);
  });

  it('keeps what the store refused and writes it in order once it answers, each callback once after its record', async () => {
    const { records, callbacks, store, state, time, count } = await setup();
    store.mode = 'down';
    const [a, b, c] = [callRecord(1), callRecord(2), callRecord(3)];
    const bLeg = callRecord(4, a.call_uuid);
    await records.write({ kind: 'stream', record: streamRecord(a) });
    await records.write({ kind: 'call', record: bLeg });
    await records.write({ kind: 'call', record: a }, hangupOf(a));
    await records.write({ kind: 'call', record: b }, hangupOf(b));
    time.advance(1000);
    await settle();
    expect(records.owed).toBe(6);
    expect(await count()).toBe(0);
    expect(callbacks.sent).toEqual([]);

    // The store is back but the account's keys are not readable yet: records go, callbacks wait.
    store.mode = 'up';
    callbacks.keys = 'unreadable';
    // A call that ends now waits behind what is owed.
    await records.write({ kind: 'call', record: c }, hangupOf(c));
    time.advance(1000);
    await settle();
    expect(await count()).toBe(4);
    expect(await state.streams.get(ACCOUNT, streamRecord(a).stream_id)).toEqual(streamRecord(a));
    expect(callbacks.sent).toEqual([]);
    expect(records.owed).toBe(3);

    callbacks.keys = 'readable';
    time.advance(1000);
    await settle();
    expect(callbacks.sent).toEqual([
      { call: a.call_uuid, recorded: true },
      { call: b.call_uuid, recorded: true },
      { call: c.call_uuid, recorded: true },
    ]);
    expect(records.owed).toBe(0);
    time.advance(5000);
    await settle();
    expect(callbacks.sent).toHaveLength(3);
    expect(await count()).toBe(4);
  });

  it('leaves one record when a write the node gave up on reached the store after all', async () => {
    const { records, callbacks, store, state, time, count } = await setup();
    store.mode = 'late';
    const call = callRecord(1);
    await records.write({ kind: 'call', record: call }, hangupOf(call));
    expect(records.owed).toBe(2);
    store.mode = 'up';
    time.advance(1000);
    await settle();
    expect(await count()).toBe(1);
    expect(await state.calls.get(ACCOUNT, call.call_uuid)).toEqual(call);
    expect(callbacks.sent).toEqual([{ call: call.call_uuid, recorded: true }]);
  });

  it('sends later a hangup callback whose record went but whose keys could not be read', async () => {
    const { records, callbacks, time } = await setup();
    callbacks.keys = 'unreadable';
    const call = callRecord(1);
    await records.write({ kind: 'call', record: call }, hangupOf(call));
    await settle();
    expect(records.owed).toBe(1);
    callbacks.keys = 'readable';
    time.advance(1000);
    await settle();
    expect(callbacks.sent).toEqual([{ call: call.call_uuid, recorded: true }]);
    expect(records.owed).toBe(0);
  });

  it('still owes after a restart what its journal file holds, and writes it once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'voxgate-owed-'));
    dirs.push(dir);
    const path = join(dir, 'journal', 'call-records.jsonl');
    const store = new FlakyStore();
    const first = await setup(path, store);
    store.mode = 'down';
    const [a, b] = [callRecord(1), callRecord(2)];
    await first.records.write({ kind: 'call', record: a }, hangupOf(a));
    await first.records.write({ kind: 'call', record: b }, hangupOf(b));
    await first.records.close();
    expect(readFileSync(path, 'utf8').trim().split('\n')).toHaveLength(4);

    store.mode = 'up';
    const second = await setup(path, store);
    await settle();
    expect(await second.count()).toBe(2);
    expect(second.callbacks.sent).toEqual([
      { call: a.call_uuid, recorded: true },
      { call: b.call_uuid, recorded: true },
    ]);
    await second.records.close();
    expect(readFileSync(path, 'utf8')).toBe('');
    expect(first.callbacks.sent).toEqual([]);
  });
});
