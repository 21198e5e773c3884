import { COLUMNS, KEYPAD, ROWS, type DtmfDigit } from './dtmf-digit.js';
import { goertzelPower } from './goertzel.js';

/** A key press found in the audio. */
export interface DetectedDigit {
  readonly digit: DtmfDigit;
  /** Sample index (from the first sample given) where the tone was first seen. */
  readonly sampleOffset: number;
}

const SAMPLE_RATE = 8000;
/** 102 samples (12.75 ms): enough resolution for the DTMF grid, short enough for 40 ms tones. */
const BLOCK = 102;
/**
 * Blocks in a row that must hold the same digit (38 ms): every tone of 45 ms or more is found,
 * about 70% of 40 ms tones (by alignment), none of 30 ms or less. Two blocks would find all
 * 40 ms tones but also some of 20 ms, which ITU-T Q.24 counts as talk-off.
 */
const BLOCKS_TO_ACCEPT = 3;
/** Blocks in a row without the digit that end a press. */
const BLOCKS_TO_RELEASE = 2;
/** Each tone must be at least this amplitude (about -44 dBFS). */
const MIN_AMPLITUDE = 200;
/** ITU-T Q.24: the high group may be 8 dB below the low group (normal twist)... */
const NORMAL_TWIST = 10 ** (8 / 10);
/** ...or 4 dB above it (reverse twist). */
const REVERSE_TWIST = 10 ** (4 / 10);
/** The two tones must carry most of the block's energy: speech and noise do not. */
const MIN_TONE_SHARE = 0.7;
/** The strongest tone of each group must stand this far (6 dB) above the others in it. */
const GROUP_MARGIN = 4;

function strongest(powers: readonly number[]): { index: number; power: number; next: number } {
  let index = 0;
  for (let i = 1; i < powers.length; i++) if ((powers[i] ?? 0) > (powers[index] ?? 0)) index = i;
  const next = Math.max(0, ...powers.filter((_, i) => i !== index));
  return { index, power: powers[index] ?? 0, next };
}

function blockDigit(samples: Int16Array, start: number): DtmfDigit | null {
  const rows = ROWS.map((f) => goertzelPower(samples, start, BLOCK, f, SAMPLE_RATE));
  const columns = COLUMNS.map((f) => goertzelPower(samples, start, BLOCK, f, SAMPLE_RATE));
  const row = strongest(rows);
  const column = strongest(columns);
  const minPower = ((MIN_AMPLITUDE * BLOCK) / 2) ** 2;
  if (row.power < minPower || column.power < minPower) return null;
  if (column.power * NORMAL_TWIST < row.power || row.power * REVERSE_TWIST < column.power) {
    return null;
  }
  if (row.power < row.next * GROUP_MARGIN || column.power < column.next * GROUP_MARGIN) {
    return null;
  }
  let energy = 0;
  for (let i = start; i < start + BLOCK; i++) energy += (samples[i] ?? 0) ** 2;
  // A sine of power P (as goertzelPower gives it) carries about 2P/BLOCK of the block energy.
  const toneEnergy = (2 * (row.power + column.power)) / BLOCK;
  if (toneEnergy < MIN_TONE_SHARE * energy) return null;
  return KEYPAD[row.index]?.[column.index] ?? null;
}

/**
 * Finds DTMF key presses in 8 kHz audio (Goertzel on the row and column frequencies, with
 * level, twist and purity checks). A press is reported once, after about 40 ms of steady
 * tone (see BLOCKS_TO_ACCEPT). Frames of any length may be given; the detector keeps what does not fill a block.
 */
export class InbandDtmfDetector {
  private pending = new Int16Array(0);
  private consumed = 0;
  private candidate: DtmfDigit | null = null;
  private candidateStart = 0;
  private candidateBlocks = 0;
  private pressed: DtmfDigit | null = null;
  private missing = 0;

  process(frame: Int16Array): DetectedDigit[] {
    const samples = new Int16Array(this.pending.length + frame.length);
    samples.set(this.pending);
    samples.set(frame, this.pending.length);
    const found: DetectedDigit[] = [];
    let start = 0;
    for (; start + BLOCK <= samples.length; start += BLOCK) {
      const detected = this.step(blockDigit(samples, start), this.consumed);
      if (detected !== null) found.push(detected);
      this.consumed += BLOCK;
    }
    this.pending = samples.slice(start);
    return found;
  }

  private step(digit: DtmfDigit | null, offset: number): DetectedDigit | null {
    if (this.pressed !== null) {
      this.missing = digit === this.pressed ? 0 : this.missing + 1;
      if (this.missing < BLOCKS_TO_RELEASE) return null;
      this.pressed = null;
    }
    if (digit !== this.candidate) {
      this.candidate = digit;
      this.candidateStart = offset;
      this.candidateBlocks = 0;
    }
    if (digit === null) return null;
    this.candidateBlocks += 1;
    if (this.candidateBlocks < BLOCKS_TO_ACCEPT) return null;
    this.pressed = digit;
    this.missing = 0;
    this.candidate = null;
    return { digit, sampleOffset: this.candidateStart };
  }
}
