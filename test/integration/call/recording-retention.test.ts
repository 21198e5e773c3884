import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RecordRetention } from '../../../src/call/record-retention.js';
import type { RecordingRecord } from '../../../src/call/recordings/recording-record.js';
import { loadConfig } from '../../../src/config/config.js';
import { formatTime } from '../../../src/core/record-time.js';
import { ManualScheduler } from '../../../src/core/scheduler.js';
import { composeRecordings } from '../../../src/recording-composition.js';
import { EmbeddedStore } from '../../../src/state/embedded-store.js';
import { createState } from '../../../src/state/state.js';
import type { CallRecord } from '../../../src/state/records.js';

/**
 * Recordings past VOXGATE_RECORDING_RETENTION_DAYS go in the call records' hourly sweep: the
 * recordings composition of the gateway on a real embedded store and a real media directory,
 * swept by RecordRetention on a clock the test moves.
 */
const DAY = 24 * 60 * 60 * 1000;
const TENANT = 'MAINACCOUNT';
const NOW = Date.UTC(2025, 5, 1);
let dataDir: string;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'voxgate-rec-retention-'));
});

afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/** The gateway's recordings parts on one store, as app.ts composes them. */
function compose(env: Record<string, string>) {
  const config = loadConfig({ VOXGATE_DATA_DIR: dataDir, ...env });
  const state = createState(new EmbeddedStore(null));
  const quiet = { info: () => {}, warn: () => {} };
  const recordings = composeRecordings(config, {
    state,
    media: { send: () => Promise.reject(new Error('no worker')) } as never,
    callbacks: { send: () => Promise.resolve() } as never,
    node: 'node-test',
    log: quiet,
  });
  return { state, recordings };
}

function recording(id: string, ageDays: number): RecordingRecord {
  const created = NOW - ageDays * DAY;
  return {
    account: TENANT,
    subaccount: null,
    created,
    recording_id: id,
    call_uuid: `call-${id}`,
    auth_id: TENANT,
    recording_format: 'wav',
    recording_type: 'call',
    conference_name: null,
    recording_url: `/v1/Account/${TENANT}/Recording/${id}.wav`,
    from_number: '+14155550100',
    to_number: '+14155550101',
    channels: 1,
    recording_start_ms: created - 2000,
    recording_end_ms: created,
    recording_duration_ms: 2000,
    file_bytes: 4,
  };
}

const ids = ['aaaaaaaa', 'bbbbbbbb', 'cccccccc'].map((p) => `${p}-0000-4000-8000-000000000000`);

async function storeThree(parts: ReturnType<typeof compose>) {
  const ages = [31, 30.5, 29];
  for (const [i, id] of ids.entries()) {
    await parts.recordings.store.put(id, Buffer.from('RIFF'));
    await parts.recordings.collection.create(recording(id, ages[i]!));
  }
  // A call record of 31 days: within the call records' 90, it stays.
  await parts.state.calls.create({
    account: TENANT,
    subaccount: null,
    created: NOW - 31 * DAY,
    call_uuid: 'call-kept',
    end_time: formatTime(NOW - 31 * DAY),
  } as CallRecord);
}

async function sweep(parts: ReturnType<typeof compose>): Promise<number> {
  const scheduler = new ManualScheduler(NOW);
  const errors: Error[] = [];
  const retention = new RecordRetention(
    parts.state,
    TENANT,
    scheduler,
    (e) => errors.push(e),
    parts.recordings.expired(TENANT),
  );
  const removed = await retention.sweep();
  retention.stop();
  expect(errors).toEqual([]);
  return removed;
}

describe('recording retention', () => {
  it('removes the files and records of recordings older than the setting, and only those', async () => {
    const parts = compose({ VOXGATE_RECORDING_RETENTION_DAYS: '30' });
    await storeThree(parts);

    expect(await sweep(parts)).toBe(2);
    const left = await parts.recordings.collection.all(TENANT);
    expect(left.map((r) => r.recording_id)).toEqual([ids[2]]);
    expect(ids.map((id) => existsSync(join(dataDir, 'media', id)))).toEqual([false, false, true]);
    expect(await parts.recordings.store.get(ids[2]!)).toEqual(Buffer.from('RIFF'));
    expect(await parts.state.calls.get(TENANT, 'call-kept')).not.toBeNull();
    // Nothing more is due.
    expect(await sweep(parts)).toBe(0);
  });

  it('keeps recordings 90 days by default, and until deleted with 0', async () => {
    const byDefault = compose({});
    await storeThree(byDefault);
    expect(await sweep(byDefault)).toBe(0);
    expect(await byDefault.recordings.collection.all(TENANT)).toHaveLength(3);

    await rm(join(dataDir, 'media'), { recursive: true, force: true });
    const forever = compose({ VOXGATE_RECORDING_RETENTION_DAYS: '0' });
    expect(forever.recordings.expired(TENANT)).toEqual([]);
  });

  it('refuses a retention or a rate that is not a figure, naming the variable', () => {
    expect(() => compose({ VOXGATE_RECORDING_RETENTION_DAYS: '30d' })).toThrow(
      /VOXGATE_RECORDING_RETENTION_DAYS.*whole number of days from 0/,
    );
    expect(() => compose({ VOXGATE_RECORDING_RATE: '1,50' })).toThrow(
      /VOXGATE_RECORDING_RATE.*decimal number of USD per minute/,
    );
  });
});
