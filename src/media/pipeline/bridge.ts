import { Resampler } from '../codec/resampler.js';
import { PushedSource } from '../playout/playout-source.js';
import type { MediaSession } from './media-session.js';

/** More than this much audio waiting (100 ms) means the far leg fell behind: start afresh. */
const MAX_QUEUED_MS = 100;

/**
 * Joins two legs on one worker (Dial): what each hears is played into the other, mixed with
 * whatever else plays there, resampled when their rates differ. Returns the function that
 * parts them again.
 */
export function bridgeSessions(a: MediaSession, b: MediaSession): () => void {
  if (a === b) throw new Error('Expected two different sessions to bridge');
  const parts = [carry(a, b), carry(b, a)];
  return () => {
    for (const part of parts) part();
  };
}

function carry(from: MediaSession, to: MediaSession): () => void {
  // Audio from a leg at a lower rate holds no more than that leg's band.
  const source = new PushedSource(Math.min(from.rate, to.rate) / 2);
  const resampler = from.rate === to.rate ? null : new Resampler(from.rate, to.rate);
  const limit = (to.rate * MAX_QUEUED_MS) / 1000;
  // The far leg's frames come on the same ticks as this leg's: a tick never waits for them
  // (as it waits for a stream's audio under way), so the source is played without ready().
  void to.play({ read: (samples) => source.read(samples), audioBand: source.audioBand }, 'mix');
  // The far leg's frames come on the ticks: were a stream's audio on this leg sent between
  // them, a frame would go without the far leg's voice (see MediaSession.paceByTicks).
  const unpace = to.paceByTicks();
  const removeTap = from.addTap((frame) => {
    if (source.queued > limit) source.clear();
    source.push(resampler ? resampler.process(frame) : frame);
  });
  return () => {
    removeTap();
    unpace();
    source.clear();
    source.end();
  };
}

/**
 * Joins two legs that share a codec by forwarding each one's RTP to the other undecoded
 * (MediaSession.relayTo). Returns the function that parts them again.
 */
export function relaySessions(a: MediaSession, b: MediaSession): () => void {
  if (a === b) throw new Error('Expected two different sessions to bridge');
  a.relayTo(b);
  b.relayTo(a);
  return () => {
    a.relayTo(null);
    b.relayTo(null);
  };
}
