import { afterEach, describe, expect, it } from 'vitest';
import type { AudioFormat } from '../../../../src/media/pipeline/audio-format.js';
import { MediaSession } from '../../../../src/media/pipeline/media-session.js';
import { PcmSource } from '../../../../src/media/playout/playout-source.js';
import { powerAt, strongestFrequency, tone } from '../../../support/signal.js';
import { streamLeg } from '../../../support/stream-leg.js';

/**
 * A bidirectional stream's audio plays for as long as the stream lasts, whatever else the call
 * does with what it plays (a key pressed during a prompt stops the prompt, a Dial stops its
 * music, a Speak replaces what plays); and once the stream is over, what its server still had
 * queued is not heard, unless the server itself closed cleanly after its last words.
 */
const L16_8K_CALL: AudioFormat = { encoding: 'L16', payloadType: 96, rate: 8000 };
const L16_8K = { encoding: 'l16', rate: 8000 } as const;
const open: MediaSession[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function leg() {
  const opened = await streamLeg(L16_8K_CALL, L16_8K);
  open.push(opened.session);
  return opened;
}

const loud = (pcm: Int16Array) => pcm.some((sample) => Math.abs(sample) > 1000);

describe("a bidirectional stream's audio", () => {
  it('goes on through an untagged stop and a replacing play, mixed with what plays after', async () => {
    const { session, audio, send, run } = await leg();
    send(tone(8000, 600, 2, 6000));
    let reached = false;
    audio.checkpoint(() => (reached = true));
    expect(strongestFrequency(run(300), 8000)).toBe(600);
    // A key pressed during a prompt, a Dial once answered: everything that plays is stopped.
    session.stopPlayback();
    expect(strongestFrequency(run(300), 8000)).toBe(600);
    // A Speak that replaces what plays: the stream's audio is mixed with it.
    void session.play(new PcmSource(tone(8000, 1500, 0.3, 6000)), 'replace');
    const both = run(300).subarray(0, 2000);
    const [stream, speak, neither] = [600, 1500, 1100].map((hz) => powerAt(both, 8000, hz));
    expect(stream).toBeGreaterThan(100 * neither!);
    expect(speak).toBeGreaterThan(100 * neither!);
    run(1200);
    expect(reached).toBe(true);
    // The stream still takes and plays new audio.
    send(tone(8000, 900, 0.5, 6000));
    expect(strongestFrequency(run(400), 8000)).toBe(900);
  });

  it('is dropped when the stream ends, and played out only after the server closed cleanly', async () => {
    const stopped = await leg();
    stopped.send(tone(8000, 600, 5, 6000));
    expect(loud(stopped.run(200))).toBe(true);
    stopped.audio.close();
    expect(loud(stopped.run(1000))).toBe(false);

    const drained = await leg();
    drained.send(tone(8000, 600, 1, 6000));
    expect(loud(drained.run(200))).toBe(true);
    drained.audio.close(true);
    const rest = drained.run(1000);
    // The 800 ms left play out, then silence.
    expect(loud(rest.subarray(0, 6000))).toBe(true);
    expect(loud(rest.subarray(7200))).toBe(false);
  });
});
