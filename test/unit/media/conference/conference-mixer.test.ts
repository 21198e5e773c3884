import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConferenceMixer } from '../../../../src/media/conference/conference-mixer.js';
import { ConferenceRecorder } from '../../../../src/media/conference/conference-recorder.js';
import type { MediaSession } from '../../../../src/media/pipeline/media-session.js';
import type { PlayoutSource } from '../../../../src/media/playout/playout-source.js';

/** A session as the mixer sees it: frames heard go to its taps, the mix is read from it. */
class FakeSession {
  readonly taps = new Set<(frame: Int16Array) => void>();
  source: PlayoutSource | null = null;
  constructor(readonly rate: 8000 | 16000) {}
  addTap(tap: (frame: Int16Array) => void): () => void {
    this.taps.add(tap);
    return () => this.taps.delete(tap);
  }
  paceByTicks(): () => void {
    return () => {};
  }
  play(source: PlayoutSource): Promise<boolean> {
    this.source = source;
    return new Promise(() => {});
  }
  speak(value: number): void {
    const frame = new Int16Array(this.rate / 50).fill(value);
    for (const tap of this.taps) tap(frame);
  }
  /** One frame of what it hears now (all zero when nothing came). */
  hear(): Int16Array {
    const read = this.source!.read(this.rate / 50);
    return read && read.length > 0 ? read : new Int16Array(this.rate / 50);
  }
}

function clock() {
  const ticks = new Set<() => void>();
  return {
    add(tick: () => void) {
      ticks.add(tick);
      return () => ticks.delete(tick);
    },
    tick: () => ticks.forEach((tick) => tick()),
    get size() {
      return ticks.size;
    },
  };
}

function conference(...rates: (8000 | 16000)[]) {
  const c = clock();
  const mixer = new ConferenceMixer(c);
  const sessions = rates.map((rate) => new FakeSession(rate));
  sessions.forEach((s, i) =>
    mixer.join(`m${i}`, s as unknown as MediaSession, { muted: false, deaf: false }),
  );
  return { c, mixer, sessions };
}

describe('ConferenceMixer', () => {
  it('gives each member the sum of the others, never their own voice', () => {
    const { c, sessions } = conference(8000, 8000, 8000);
    sessions.forEach((s, i) => s.speak(100 * (i + 1)));
    c.tick();
    expect(sessions.map((s) => s.hear()[80])).toEqual([500, 400, 300]);
  });

  it('saturates at 16 bits instead of wrapping', () => {
    const { c, sessions } = conference(8000, 8000, 8000);
    sessions[0]!.speak(30000);
    sessions[1]!.speak(30000);
    sessions[2]!.speak(-30000);
    c.tick();
    expect(sessions[2]!.hear()[0]).toBe(32767);
    sessions[0]!.speak(-30000);
    sessions[1]!.speak(-30000);
    c.tick();
    expect(sessions[2]!.hear()[0]).toBe(-32768);
  });

  it('leaves a muted member out and gives a deaf one nothing', () => {
    const { c, mixer, sessions } = conference(8000, 8000, 8000);
    mixer.update('m0', { muted: true });
    mixer.update('m2', { deaf: true });
    sessions.forEach((s, i) => s.speak(100 * (i + 1)));
    c.tick();
    expect(sessions.map((s) => s.hear()[80])).toEqual([500, 300, 0]);
  });

  it('mixes at 16 kHz when every leg allows it, else at 8 kHz', () => {
    const wide = conference(16000, 16000);
    expect(wide.mixer.rate).toBe(16000);
    wide.mixer.join('narrow', new FakeSession(8000) as unknown as MediaSession, {
      muted: false,
      deaf: false,
    });
    expect(wide.mixer.rate).toBe(8000);
    wide.mixer.leave('narrow');
    expect(wide.mixer.rate).toBe(16000);
  });

  it('records the sum of every voice but the muted, silence when none speaks, until closed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mixer-rec-'));
    const { c, mixer, sessions } = conference(8000, 8000, 8000);
    const path = join(dir, 'room.wav');
    const recorder = await ConferenceRecorder.start({ recordingId: 'r1', path, channels: 1 }, 8000);
    mixer.record(recorder);
    mixer.update('m2', { muted: true });
    sessions.forEach((s, i) => s.speak(100 * (i + 1)));
    c.tick();
    c.tick(); // no one spoke
    sessions[1]!.speak(-50);
    c.tick();
    mixer.close();
    const outcome = await recorder.ended;
    expect(outcome).toMatchObject({ state: 'completed', reason: 'session-closed', durationMs: 60 });
    const file = await readFile(path);
    const pcm = new Int16Array(file.buffer, file.byteOffset + 44, (file.length - 44) / 2);
    expect([pcm.length, pcm[0], pcm[159], pcm[160], pcm[320]]).toEqual([480, 300, 300, 0, -50]);
    await rm(dir, { recursive: true });
  });

  it('stops ticking once closed', () => {
    const { c, mixer } = conference(8000, 8000);
    expect(c.size).toBe(1);
    mixer.close();
    expect(c.size).toBe(0);
    expect(mixer.size).toBe(0);
  });
});
