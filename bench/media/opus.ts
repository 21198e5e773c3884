/**
 * What does Opus cost per 20 ms frame, against G.711, in the same run?
 *
 *   npm run bench:media-opus [-- --rounds 7 --round-ms 300 --warmup-ms 300]
 *
 * Times, on the noisy synthetic speech bench:media-dsp uses: mu-law encode and decode at 8 kHz
 * (the native tables, as a call uses them); Opus encode at 16 kHz (mono, VoIP, 24 kbit/s,
 * in-band FEC planned for 10 % loss) at complexity 0, 5 (voxgate's default for wideband), 9
 * and 10, and at 8 and 24 kHz at complexity 5; what a leg encodes with no FEC planned (its peer
 * reports no loss), at complexity 0, 1 and 5, narrowband from 8 kHz audio and wideband, through
 * libopus's VoIP encoder and CELT only (what a leg codes narrowband audio with, at 0); Opus decode at 16 kHz of a packet, of a lost packet from the next
 * one's FEC data, and concealment of a lost one; and the quality of what a leg sends at
 * complexity 0 to 5 and 10 by measures that need no listener (opus-quality.ts). Prints a table
 * and writes bench/results/media-opus-*.json with the machine and its load.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { muLawDecode, muLawEncode } from '../../src/media/codec/g711.js';
import { OpusDecoder, OpusEncoder, type OpusRate } from '../../src/media/codec/opus.js';
import { convertRate } from '../../src/media/codec/resampler.js';
import { describeMachine } from '../api/machine.js';
import { describeRevision } from '../api/revision.js';
import {
  median,
  timeCases,
  timingPlanFromArgs,
  type TimedCase,
  type TimingPlan,
} from './frame-timing.js';
import { opusQuality } from './opus-quality.js';
import { frames, makeTestAudio } from './test-audio.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const BITRATE = 24000;
const LOSS_PERCENT = 10;

const timingPlan = (): TimingPlan => timingPlanFromArgs({ roundMs: 300, warmupMs: 300 });

/** Hands out the clip's frames in a loop. */
function cycle<T>(items: readonly T[]): () => T {
  let i = 0;
  return () => items[i++ % items.length]!;
}

function opusEncodeCase(pcm: Int16Array, rate: OpusRate, complexity: number): TimedCase {
  const encoder = new OpusEncoder(rate, {
    bitrate: BITRATE,
    expectedLossPercent: LOSS_PERCENT,
    complexity,
  });
  const next = cycle(frames(pcm, rate / 50));
  return {
    id: `opus encode ${rate / 1000}k c${complexity}`,
    work: () => encoder.encode(next()).length,
  };
}

/**
 * What a leg encodes once its peer has reported no loss (no FEC planned): a stream's 8 kHz
 * audio upsampled to the 16 kHz call and coded narrowband, and 16 kHz audio coded wideband,
 * through libopus's VoIP encoder and CELT only (what a leg codes narrowband audio with).
 */
function legEncodeCases(pcm8k: Int16Array, pcm16k: Int16Array): TimedCase[] {
  const upsampled = convertRate(pcm8k, 8000, 16000);
  return [false, true].flatMap((celtOnly) =>
    [0, 1, 5].flatMap((complexity) => {
      const options = { bitrate: BITRATE, expectedLossPercent: 0, complexity, celtOnly };
      const narrow = new OpusEncoder(16000, options);
      narrow.setAudioBand(4000, true);
      const wide = new OpusEncoder(16000, options);
      const narrowNext = cycle(frames(upsampled, 320));
      const wideNext = cycle(frames(pcm16k, 320));
      const coding = celtOnly ? ' CELT only' : '';
      return [
        {
          id: `opus encode 16k c${complexity} narrowband no FEC${coding}`,
          work: () => narrow.encode(narrowNext()).length,
        },
        {
          id: `opus encode 16k c${complexity} wideband no FEC${coding}`,
          work: () => wide.encode(wideNext()).length,
        },
      ];
    }),
  );
}

function opusDecodeCases(pcm16k: Int16Array): TimedCase[] {
  const encoder = new OpusEncoder(16000, { bitrate: BITRATE, expectedLossPercent: LOSS_PERCENT });
  const packets = frames(pcm16k, 320).map((frame) => encoder.encode(frame));
  const decoder = new OpusDecoder(16000);
  const plain = cycle(packets);
  const fec = cycle(packets);
  return [
    { id: 'opus decode 16k', work: () => decoder.decode(plain()).length },
    { id: 'opus decode 16k FEC', work: () => decoder.decodeFec(fec(), 320).length },
    { id: 'opus conceal 16k', work: () => decoder.conceal(320).length },
  ];
}

function cases(audio: ReturnType<typeof makeTestAudio>): TimedCase[] {
  const pcm8k = audio.pcm[8000];
  const pcm16k = audio.pcm[16000];
  const pcm24k = convertRate(audio.pcm[48000], 48000, 24000);
  const muLawFrames = frames(pcm8k, 160);
  const codes = muLawFrames.map((frame) => new Uint8Array(muLawEncode(frame)));
  const encodeNext = cycle(muLawFrames);
  const decodeNext = cycle(codes);
  return [
    { id: 'mu-law encode 8k', work: () => muLawEncode(encodeNext()).length },
    { id: 'mu-law decode 8k', work: () => muLawDecode(decodeNext()).length },
    ...[0, 5, 9, 10].map((complexity) => opusEncodeCase(pcm16k, 16000, complexity)),
    opusEncodeCase(pcm8k, 8000, 5),
    opusEncodeCase(pcm24k, 24000, 5),
    ...legEncodeCases(pcm8k, pcm16k),
    ...opusDecodeCases(pcm16k),
  ];
}

/** Mean bytes per packet of the clip at each complexity, and what that makes in bit/s. */
function packetSizes(pcm16k: Int16Array): Record<string, number> {
  const sizes: Record<string, number> = {};
  for (const complexity of [0, 5, 9, 10]) {
    const encoder = new OpusEncoder(16000, {
      bitrate: BITRATE,
      expectedLossPercent: LOSS_PERCENT,
      complexity,
    });
    const all = frames(pcm16k, 320).map((frame) => encoder.encode(frame).length);
    sizes[`c${complexity}`] = Math.round(all.reduce((a, b) => a + b, 0) / all.length);
  }
  return sizes;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

function main(): void {
  const plan = timingPlan();
  const audio = makeTestAudio();
  const timed = cases(audio);
  const timings = timeCases(timed, plan);
  const results = timed.map((c) => {
    const t = timings.get(c.id)!;
    return {
      id: c.id,
      usPerFrame: round2(median(t.roundsUsPerFrame)),
      roundsUsPerFrame: t.roundsUsPerFrame.map(round2),
    };
  });
  const date = new Date().toISOString();
  const run = {
    benchmark: 'media-opus',
    date,
    machine: describeMachine(),
    revision: describeRevision(ROOT),
    loadAverageAfter: loadavg().map(round2),
    plan,
    audio: { description: audio.description, seconds: audio.seconds },
    settings: { bitrate: BITRATE, expectedLossPercent: LOSS_PERCENT, fec: true, frameMs: 20 },
    meanPacketBytes16k: packetSizes(audio.pcm[16000]),
    quality: opusQuality(audio.pcm),
    cases: results,
  };
  console.log(`media-opus: µs per 20 ms frame (median of ${plan.rounds} rounds)`);
  console.table(results.map((r) => ({ case: r.id, 'µs/frame': r.usPerFrame })));
  console.log('mean Opus packet bytes at 16 kHz by complexity:', run.meanPacketBytes16k);
  console.log('what a leg sends, without a listener: SNR in dB (see bench/media/opus-quality.ts)');
  console.table(run.quality);
  mkdirSync(RESULTS_DIR, { recursive: true });
  const stamp = date.replace(/\.\d+Z$/, 'Z').replaceAll(':', '-');
  const json = `${JSON.stringify(run, null, 2)}\n`;
  for (const name of [`media-opus-${stamp}.json`, 'media-opus-latest.json']) {
    writeFileSync(join(RESULTS_DIR, name), json);
    console.log(`wrote ${join('bench/results', name)}`);
  }
}

main();
