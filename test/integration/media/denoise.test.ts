import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NoiseSuppressor } from '../../../src/media/codec/noise-suppressor.js';
import { energyDbfs } from '../../../src/media/codec/pcm-frame.js';
import type { SampleRate } from '../../../src/media/codec/argument-checks.js';

// The fixture: espeak-ng speech after LEADING_NOISE_S of noise alone, with steady pink noise
// about 12 dB below the speech under all of it, mixed by sox at the call's rate. The suppressor
// needs a few hundred ms to learn the noise, so the noise-only measurement starts at CONVERGED_S.
const LEADING_NOISE_S = 1.5;
const CONVERGED_S = 0.5;
const TEXT = 'Thank you for calling. Please say the name of the person you want to reach.';
const RAW = ['-t', 'raw', '-e', 'signed', '-b', '16', '-c', '1', '-L'];

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'voxgate-denoise-'));
  execFileSync('espeak-ng', ['-v', 'en-us', '-w', join(dir, 'speech.wav'), TEXT]);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function noisySpeech(rate: number): Int16Array {
  const speech = join(dir, `speech-${rate}.raw`);
  const noise = join(dir, `noise-${rate}.raw`);
  const mixed = join(dir, `mixed-${rate}.raw`);
  const format = [...RAW, '-r', String(rate)];
  execFileSync('sox', [join(dir, 'speech.wav'), ...format, speech, 'pad', String(LEADING_NOISE_S)]);
  const seconds = readFileSync(speech).length / 2 / rate;
  // -R: the same noise on every run.
  execFileSync('sox', [
    '-R',
    '-n',
    ...format,
    noise,
    'synth',
    String(seconds),
    'pinknoise',
    'vol',
    '0.1',
  ]);
  execFileSync('sox', [
    '-m',
    '-v',
    '1',
    ...format,
    speech,
    '-v',
    '1',
    ...format,
    noise,
    ...format,
    mixed,
  ]);
  const bytes = readFileSync(mixed);
  return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2);
}

function denoise(input: Int16Array, rate: SampleRate, level: number): Int16Array {
  const suppressor = new NoiseSuppressor(rate, level);
  const out = new Int16Array(input.length);
  const n = suppressor.frameSamples;
  for (let offset = 0; offset + n <= input.length; offset += n) {
    out.set(suppressor.process(input.subarray(offset, offset + n)), offset);
  }
  return out;
}

function segment(pcm: Int16Array, rate: number, fromS: number, toS?: number): Int16Array {
  return pcm.subarray(
    Math.round(fromS * rate),
    toS === undefined ? undefined : Math.round(toS * rate),
  );
}

describe('noise suppression on speech in noise', () => {
  for (const rate of [8000, 16000, 24000, 48000] as const) {
    it(`removes at least 15 dB of noise and keeps the speech within 3 dB at ${rate} Hz`, () => {
      const input = noisySpeech(rate);
      const output = denoise(input, rate, 100);
      const noiseIn = energyDbfs(segment(input, rate, CONVERGED_S, LEADING_NOISE_S));
      const noiseOut = energyDbfs(segment(output, rate, CONVERGED_S, LEADING_NOISE_S));
      const speechIn = energyDbfs(segment(input, rate, LEADING_NOISE_S));
      const speechOut = energyDbfs(segment(output, rate, LEADING_NOISE_S));
      expect(noiseIn - noiseOut).toBeGreaterThanOrEqual(15);
      expect(speechIn - speechOut).toBeLessThan(3);
    });
  }
});
