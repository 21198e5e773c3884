import { muLawEncode } from '../../src/media/codec/g711.js';

/**
 * Numbered audio for the recording bench: frame k of a phone's stream is 20 ms of one of 16
 * tones (300 Hz + 200 Hz × (k mod 16)), so a file read back tells, window by window, which
 * frame each 20 ms holds, and a frame missing, late or dropped shows as silence or a skip.
 */
export const SYMBOLS = 16;
const RATE = 8000;
const FRAME = 160;
const symbolHz = (symbol: number) => 300 + 200 * symbol;

/** The 16 PCMU payloads, frame k sends payloads[k % 16]. */
export function numberedPayloads(): Buffer[] {
  return Array.from({ length: SYMBOLS }, (_, symbol) =>
    muLawEncode(
      Int16Array.from({ length: FRAME }, (_, i) =>
        Math.round(8000 * Math.sin((2 * Math.PI * symbolHz(symbol) * i) / RATE)),
      ),
    ),
  );
}

/** Goertzel power of `hz` in a window of 8 kHz samples. */
function powerAt(pcm: Int16Array, from: number, hz: number): number {
  const coeff = 2 * Math.cos((2 * Math.PI * hz) / RATE);
  let s1 = 0;
  let s2 = 0;
  for (let i = from; i < from + FRAME; i++) {
    const s = pcm[i]! + coeff * s1 - s2;
    s2 = s1;
    s1 = s;
  }
  return s1 * s1 + s2 * s2 - coeff * s1 * s2;
}

/** Which frame symbol a 20 ms window holds; -1 for silence. */
function symbolOf(pcm: Int16Array, from: number): number {
  let energy = 0;
  for (let i = from; i < from + FRAME; i++) energy += pcm[i]! * pcm[i]!;
  if (Math.sqrt(energy / FRAME) < 500) return -1;
  let best = 0;
  let bestPower = -1;
  for (let symbol = 0; symbol < SYMBOLS; symbol++) {
    const power = powerAt(pcm, from, symbolHz(symbol));
    if (power > bestPower) [best, bestPower] = [symbol, power];
  }
  return best;
}

export interface GapReport {
  /** 20 ms windows between the first and the last frame heard. */
  windows: number;
  /** The longest stretch with the stream's frames missing or late, in ms (0: none). */
  largestGapMs: number;
  /** Stretches of any length with frames missing or late. */
  gaps: number;
  /** Where they are (the first 50), ms from the file's start, and their length in ms. */
  where: { atMs: number; ms: number }[];
}

/**
 * The gaps of one phone's numbered stream in a recording's channel (8 kHz, frames on 20 ms
 * boundaries, as the worker writes one frame per tick). Leading and trailing silence (before
 * the phone started, after it stopped) is left out. A stretch of silent windows is a frame
 * late or missing; a skip in the numbering (k then k+2) is a frame dropped. A stretch is
 * counted as the larger of the two, in frames of 20 ms.
 */
export function gapsOf(pcm: Int16Array): GapReport {
  const symbols: number[] = [];
  for (let at = 0; at + FRAME <= pcm.length; at += FRAME) symbols.push(symbolOf(pcm, at));
  const first = symbols.findIndex((s) => s >= 0);
  const last = symbols.findLastIndex((s) => s >= 0);
  if (first < 0) return { windows: 0, largestGapMs: Infinity, gaps: 0, where: [] };
  const where: GapReport['where'] = [];
  let largest = 0;
  let gaps = 0;
  let previous = symbols[first]!;
  let silent = 0;
  for (let i = first + 1; i <= last; i++) {
    const symbol = symbols[i]!;
    if (symbol < 0) {
      silent++;
      continue;
    }
    const skipped = (symbol - previous - 1 + SYMBOLS) % SYMBOLS;
    const missing = Math.max(silent, skipped);
    if (missing > 0) {
      gaps++;
      largest = Math.max(largest, missing * 20);
      if (where.length < 50) where.push({ atMs: (i - silent) * 20, ms: missing * 20 });
    }
    previous = symbol;
    silent = 0;
  }
  return { windows: last - first + 1, largestGapMs: largest, gaps, where };
}
