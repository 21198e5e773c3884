/**
 * The answering-machine detection corpus: labelled clips as a callee's line would carry them,
 * made from two text-to-speech engines (espeak-ng and flite) with several voices and rates,
 * a noise floor from -55 to -35 dBFS, telephone band filtering (300-3400 Hz) and mu-law. Made
 * on demand into a cache directory, never committed as audio: each clip is 8 kHz mu-law, its
 * bytes the RTP payloads a callee sends, 160 to a packet.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { muLawDecode, muLawEncode } from '../../src/media/codec/g711.js';
import { seededRandom } from '../../test/support/prng.js';

export type Label = 'human' | 'machine';

export type Category =
  | 'short-hello'
  | 'late-answer'
  | 'hello-hello'
  | 'business-greeting'
  | 'silence'
  | 'personal-voicemail'
  | 'carrier-voicemail'
  | 'late-voicemail'
  | 'ivr-menu';

export const CATEGORIES: Record<Category, Label> = {
  'short-hello': 'human',
  'late-answer': 'human',
  'hello-hello': 'human',
  'business-greeting': 'human',
  silence: 'human',
  'personal-voicemail': 'machine',
  'carrier-voicemail': 'machine',
  'late-voicemail': 'machine',
  'ivr-menu': 'machine',
};

export interface Voice {
  engine: 'espeak-ng' | 'flite';
  name: string;
  /** espeak-ng words a minute, or flite's duration stretch (above 1 is slower). */
  rate: number;
}

type Segment =
  | { kind: 'silence'; ms: number }
  | { kind: 'speech'; text: string }
  | { kind: 'beep'; hz: number; ms: number };

export interface ClipSpec {
  id: string;
  index: number;
  label: Label;
  category: Category;
  voice: Voice;
  segments: Segment[];
  /** RMS of the speech, dBFS. */
  speechDbfs: number;
  noiseDbfs: number;
  /** A second mu-law round trip (a tandem hop) before the one on the wire. */
  tandem: boolean;
  /** Part of the corpus the thresholds were tuned on; the rest is reported. */
  split: 'tune' | 'report';
}

export interface Clip extends ClipSpec {
  /** 8 kHz mu-law, 160 bytes per 20 ms. */
  ulaw: Buffer;
  durationMs: number;
}

const ESPEAK_VOICES = ['en-us', 'en-us+f3', 'en-gb', 'en-gb+f4', 'en-gb-scotland', 'en-029+m3'];
const FLITE_VOICES = ['slt', 'rms', 'awb', 'kal'];

const NAMES = ['John', 'Maria', 'Dave', 'Priya', 'Chen', 'Olga', 'Sam', 'Fatima'];
const COMPANIES = ['Acme Dental', 'Northside Plumbing', 'Blue Harbor Realty', 'Summit Auto'];

const HELLOS = ['Hello?', 'Hi.', 'Yeah, hello?', 'Hello, this is {name}.', 'Speaking.', 'Hey.'];
const BUSINESS = [
  '{company}, this is {name}.',
  'Good morning, {company}, {name} speaking.',
  '{company}, how can I help?',
];
const PERSONAL = [
  "Hi, you've reached {name}. I can't come to the phone right now. Please leave a message after the tone.",
  "Hey, it's {name}. Leave me a message and I'll call you back.",
  "You've reached {name}. Sorry I missed your call, please leave your name and number.",
  "Hello, this is {name}. I'm not available at the moment, please leave a message.",
];
const CARRIER = [
  'The person you are calling is not available. At the tone, please record your message. When you have finished recording, you may hang up.',
  'The number you have dialed is not available. Please leave a message after the tone.',
  'Your call has been forwarded to an automatic voice message system. The person you are trying to reach is not available.',
];
const IVR = [
  'Thank you for calling {company}. For sales, press one. For support, press two. For all other inquiries, please stay on the line.',
  'Welcome to {company}. Your call is important to us. Please listen carefully, as our menu options have changed.',
];

/** How many clips of each category; 9 categories, 243 clips. */
const PER_CATEGORY = 27;

/** The clip specs, the same on every run. */
export function corpusSpecs(perCategory = PER_CATEGORY, seed = 2026): ClipSpec[] {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const between = (min: number, max: number) => Math.round(min + random() * (max - min));
  const fill = (template: string) =>
    template.replace('{name}', pick(NAMES)).replace('{company}', pick(COMPANIES));
  const specs: ClipSpec[] = [];
  for (let n = 0; n < perCategory; n++) {
    for (const category of Object.keys(CATEGORIES) as Category[]) {
      const index = specs.length;
      const voice: Voice =
        index % 2 === 0
          ? { engine: 'espeak-ng', name: pick(ESPEAK_VOICES), rate: between(140, 200) }
          : { engine: 'flite', name: pick(FLITE_VOICES), rate: 0.85 + random() * 0.4 };
      const beep = (): Segment[] =>
        random() < 0.6
          ? [
              { kind: 'silence', ms: between(200, 600) },
              { kind: 'beep', hz: between(440, 2000), ms: between(300, 1000) },
            ]
          : [];
      let segments: Segment[];
      switch (category) {
        case 'short-hello':
          segments = [silence(between(200, 1200)), speech(fill(pick(HELLOS)))];
          break;
        case 'late-answer':
          segments = [silence(between(1500, 2800)), speech(fill(pick(HELLOS)))];
          break;
        case 'hello-hello':
          segments = [
            silence(between(200, 1000)),
            speech('Hello?'),
            silence(between(1000, 1800)),
            speech('Hello?'),
          ];
          break;
        case 'business-greeting':
          segments = [silence(between(200, 900)), speech(fill(pick(BUSINESS)))];
          break;
        case 'silence':
          segments = [];
          break;
        case 'personal-voicemail':
          segments = [silence(between(100, 900)), speech(fill(pick(PERSONAL))), ...beep()];
          break;
        case 'carrier-voicemail':
          segments = [silence(between(100, 900)), speech(pick(CARRIER)), ...beep()];
          break;
        case 'late-voicemail':
          segments = [
            silence(between(2000, 3200)),
            speech(fill(pick([...PERSONAL, ...CARRIER]))),
            ...beep(),
          ];
          break;
        case 'ivr-menu':
          segments = [silence(between(100, 700)), speech(fill(pick(IVR)))];
          break;
      }
      specs.push({
        id: `${String(index).padStart(3, '0')}-${category}`,
        index,
        label: CATEGORIES[category],
        category,
        voice,
        segments,
        speechDbfs: between(-26, -14),
        noiseDbfs: between(-55, -35),
        tandem: random() < 0.3,
        // A third of each category tunes; the other two thirds are reported.
        split: n % 3 === 0 ? 'tune' : 'report',
      });
    }
  }
  return specs;
}

const RATE = 8000;
/** Every clip runs on this long after its last sound: the line stays open, quiet. */
const TAIL_MS = 6000;

/** Renders (or reads from the cache) every clip of the specs. */
export function renderCorpus(specs: ClipSpec[], cacheDir = defaultCacheDir()): Clip[] {
  mkdirSync(cacheDir, { recursive: true });
  return specs.map((spec) => renderClip(spec, cacheDir));
}

export function defaultCacheDir(): string {
  return process.env.VOXGATE_AMD_CORPUS_DIR ?? join(tmpdir(), 'voxgate-amd-corpus');
}

export function renderClip(spec: ClipSpec, cacheDir = defaultCacheDir()): Clip {
  const key = `${spec.id}-${hashOf(JSON.stringify(spec))}.ul`;
  const path = join(cacheDir, key);
  if (!existsSync(path)) {
    mkdirSync(cacheDir, { recursive: true });
    writeFileSync(path, synthesize(spec, cacheDir));
  }
  const ulaw = readFileSync(path);
  return { ...spec, ulaw, durationMs: ulaw.length / 8 };
}

function synthesize(spec: ClipSpec, dir: string): Buffer {
  const random = seededRandom(spec.index * 7919 + 17);
  const parts: Int16Array[] = [];
  const speechGain = 32768 * 10 ** (spec.speechDbfs / 20);
  for (const segment of spec.segments) {
    if (segment.kind === 'silence') parts.push(new Int16Array((segment.ms * RATE) / 1000));
    else if (segment.kind === 'beep') parts.push(beepSamples(segment.hz, segment.ms, speechGain));
    else parts.push(scaleTo(trimmed(speak(segment.text, spec.voice, dir)), speechGain));
  }
  parts.push(new Int16Array((TAIL_MS * RATE) / 1000));
  const clean = concat(parts);
  // Noise on the line, then the line's band and its codec.
  const noiseRms = 32768 * 10 ** (spec.noiseDbfs / 20);
  const noisy = new Int16Array(clean.length);
  for (let i = 0; i < clean.length; i++) {
    noisy[i] = clamp(clean[i]! + gaussian(random) * noiseRms);
  }
  let line = bandLimit(noisy, dir, spec.id);
  if (spec.tandem) line = muLawDecode(muLawEncode(line));
  return Buffer.from(muLawEncode(line));
}

function speak(text: string, voice: Voice, dir: string): Int16Array {
  const wav = join(dir, `tts-${process.pid}.wav`);
  if (voice.engine === 'espeak-ng') {
    execFileSync('espeak-ng', ['-v', voice.name, '-s', String(voice.rate), '-w', wav, text]);
  } else {
    execFileSync('flite', [
      '-voice',
      voice.name,
      '--setf',
      `duration_stretch=${voice.rate.toFixed(2)}`,
      '-t',
      text,
      '-o',
      wav,
    ]);
  }
  const raw = execFileSync('sox', [
    wav,
    '-t',
    'raw',
    '-e',
    'signed',
    '-b',
    '16',
    '-r',
    '8000',
    '-c',
    '1',
    '-',
  ]);
  rmSync(wav, { force: true });
  return new Int16Array(raw.buffer, raw.byteOffset, raw.length >> 1).slice();
}

/** The telephone band: 300-3400 Hz, by sox's sinc filter. */
function bandLimit(samples: Int16Array, dir: string, id: string): Int16Array {
  const input = join(dir, `band-${process.pid}-${id}.raw`);
  writeFileSync(input, Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength));
  const format = ['-t', 'raw', '-e', 'signed', '-b', '16', '-r', '8000', '-c', '1'];
  const out = execFileSync('sox', [...format, input, ...format, '-', 'sinc', '300-3400'], {
    maxBuffer: 64 * 1024 * 1024,
  });
  rmSync(input, { force: true });
  return new Int16Array(out.buffer, out.byteOffset, out.length >> 1).slice();
}

/** The speech without the engine's own leading and trailing silence. */
function trimmed(samples: Int16Array): Int16Array {
  const loud = (i: number) => Math.abs(samples[i]!) > 300;
  let start = 0;
  while (start < samples.length && !loud(start)) start++;
  let end = samples.length;
  while (end > start && !loud(end - 1)) end--;
  return samples.subarray(start, end);
}

function scaleTo(samples: Int16Array, rms: number): Int16Array {
  let sum = 0;
  for (const s of samples) sum += s * s;
  const now = Math.sqrt(sum / Math.max(1, samples.length));
  const gain = now === 0 ? 0 : rms / now;
  return samples.map((s) => clamp(s * gain));
}

function beepSamples(hz: number, ms: number, rms: number): Int16Array {
  const n = (ms * RATE) / 1000;
  const amplitude = rms * Math.SQRT2;
  return Int16Array.from({ length: n }, (_, i) =>
    clamp(amplitude * Math.sin((2 * Math.PI * hz * i) / RATE)),
  );
}

function silence(ms: number): Segment {
  return { kind: 'silence', ms };
}

function speech(text: string): Segment {
  return { kind: 'speech', text };
}

function concat(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function clamp(value: number): number {
  return Math.max(-32768, Math.min(32767, Math.round(value)));
}

/** A standard normal sample (Box-Muller). */
function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

function hashOf(text: string): string {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return (h >>> 0).toString(16);
}
