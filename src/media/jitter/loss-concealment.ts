/**
 * Concealment for lost 16-bit PCM frames: the last good frame again, fading out over a few
 * frames so that a long gap ends in silence rather than a buzz.
 */
export class LossConcealment {
  private last: Int16Array | undefined;
  private concealed = 0;

  /** @param fadeFrames how many concealed frames it takes to fade to silence. */
  constructor(private readonly fadeFrames = 4) {
    if (!Number.isInteger(fadeFrames) || fadeFrames < 1)
      throw new RangeError(`Expected a positive integer for fadeFrames but received ${fadeFrames}`);
  }

  /** Notes a frame that was played as received; it is the one repeated after a loss. */
  played(frame: Int16Array): void {
    this.last = frame;
    this.concealed = 0;
  }

  /** A frame to play in place of a lost one, `frameLength` samples long. */
  conceal(frameLength: number): Int16Array {
    const out = new Int16Array(frameLength);
    const last = this.last;
    const step = this.concealed++;
    if (!last || step >= this.fadeFrames) return out;
    // Gain falls linearly across this frame, continuing from where the previous one ended.
    const from = 1 - step / this.fadeFrames;
    const to = 1 - (step + 1) / this.fadeFrames;
    for (let i = 0; i < frameLength; i++) {
      const gain = from + ((to - from) * i) / frameLength;
      out[i] = Math.round(last[i % last.length]! * gain);
    }
    return out;
  }
}
