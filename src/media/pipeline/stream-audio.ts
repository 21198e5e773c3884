import type { SampleRate } from '../codec/argument-checks.js';
import { muLawDecode, muLawEncode } from '../codec/g711.js';
import { NoiseSuppressor } from '../codec/noise-suppressor.js';
import { concatPcm } from '../codec/pcm-frame.js';
import { Resampler } from '../codec/resampler.js';
import { PushedSource } from '../playout/playout-source.js';
import type { MediaSession } from './media-session.js';

/** How a stream carries audio: 16-bit little-endian PCM or mu-law, at a rate. */
export interface StreamAudioFormat {
  encoding: 'l16' | 'mulaw';
  rate: SampleRate;
}

export type StreamTrackName = 'inbound' | 'outbound';

export interface StreamAudioOptions {
  format: StreamAudioFormat;
  /** The tracks forked to the server: what the caller says, what the call plays to them. */
  tracks: readonly StreamTrackName[];
  /** 60-100: noise suppression on the inbound track at that strength; null for none. */
  noiseCancellationLevel: number | null;
  /** Whether the server's audio is played into the call. */
  bidirectional: boolean;
  /** Seconds of the server's audio that may wait to be played (default 40). */
  maxQueuedSeconds?: number;
  /**
   * Every 20 ms per track, the frame in the stream's format. An inbound frame goes as soon as
   * its packet arrives (`arrivedAt`, performance.now()); silence fills in (arrivedAt null)
   * when the caller sends nothing.
   */
  onFrame(track: StreamTrackName, payload: Buffer, arrivedAt: number | null): void;
  onDigit(digit: string): void;
  /** Seconds from a playAudio's arrival to its first sample going out as RTP. */
  onPlayoutLatency?(seconds: number): void;
}

/** The rule at the bound of the playout queue, as servers are told. */
export class QueueFullError extends Error {}

/**
 * The audio side of one stream fork on a media session: each frame of the forked tracks
 * converted to the stream's rate and encoding (the inbound track denoised first, when asked),
 * digits heard, and the server's audio decoded, converted to the call's rate and played out at
 * real time however fast it came, with checkpoints that fire once the audio queued before them
 * has been played out to the call. Nothing here waits: the caller owns the socket.
 */
export class StreamAudio {
  private readonly detach: (() => void)[] = [];
  private readonly pushed: PushedSource | null;
  private readonly maxQueued: number;
  /** Call-rate samples pushed, and played out, since the stream began. */
  private pushedTotal = 0;
  private playedTotal = 0;
  private checkpoints: { at: number; onPlayed: () => void }[] = [];
  /** Where each playAudio's first sample sits, and when it arrived: playout latency. */
  private arrivals: { at: number; receivedAt: number }[] = [];
  /**
   * The server's audio at another rate than the call's, to the call's: one filter over the
   * chunks as they come, so their joins are as clean as the rest (a filter per chunk would
   * fade each one's edges, 50 times a second).
   */
  private toCall: Resampler | null = null;
  private closed = false;

  constructor(
    private readonly session: MediaSession,
    private readonly options: StreamAudioOptions,
  ) {
    this.maxQueued = (options.maxQueuedSeconds ?? 40) * session.rate;
    const { format } = options;
    const inbound = options.tracks.includes('inbound');
    const outbound = options.tracks.includes('outbound');
    const frameSamples = session.rate / 50;
    const toStreamIn = this.converter(format.rate);
    const toStreamOut = this.converter(format.rate);
    const denoise =
      inbound && options.noiseCancellationLevel !== null
        ? new NoiseSuppressor(session.rate, options.noiseCancellationLevel)
        : null;
    const silence = new Int16Array(frameSamples);
    let inboundSent = 0;
    let lastSequence: number | null = null;
    let pending: Int16Array = new Int16Array(0);
    const sendInbound = (frame: Int16Array, arrivedAt: number | null) => {
      inboundSent++;
      const clean = denoise ? denoise.processFrames(frame) : frame;
      options.onFrame('inbound', encode(toStreamIn(clean), format.encoding), arrivedAt);
    };
    // The inbound track runs at real time: `due` frames by now since `anchor`. The caller's
    // packets drive it; when none come for a while, silence keeps it going, and the next packet
    // re-anchors it, so ordinary jitter never adds or drops a frame.
    let anchor = performance.now();
    let filling = true;
    const due = () => Math.floor((performance.now() - anchor) / 20);
    if (inbound) {
      // Each packet's audio goes out as it arrives, in 20 ms frames; a packet older than the
      // newest (reordered, duplicated), or one far ahead of real time, is dropped.
      this.detach.push(
        session.addPacketTap((pcm, packet, arrivedAt) => {
          if (
            lastSequence !== null &&
            ((packet.sequenceNumber - lastSequence) & 0xffff) >= 0x8000
          ) {
            return;
          }
          if (lastSequence === packet.sequenceNumber) return;
          lastSequence = packet.sequenceNumber;
          if (filling) {
            anchor = arrivedAt - inboundSent * 20;
            filling = false;
          } else if (inboundSent >= due() + LATE_FRAMES) {
            return;
          }
          pending = pending.length === 0 ? pcm : concatPcm(pending, pcm);
          while (pending.length >= frameSamples) {
            sendInbound(pending.subarray(0, frameSamples), arrivedAt);
            pending = pending.subarray(frameSamples);
          }
        }),
      );
    }
    // Every tick, whether or not the leg sends a frame then: silence for the inbound track
    // when the caller has sent nothing for a while, so that it runs every 20 ms.
    if (inbound) {
      this.detach.push(
        session.addTickTap(() => {
          if (inboundSent >= due() - LATE_FRAMES) return;
          filling = true;
          while (inboundSent < due() - LATE_FRAMES) sendInbound(silence, null);
        }),
      );
    }
    // Every frame the leg plays out, for the outbound track.
    if (outbound) {
      this.detach.push(
        session.addOutboundTap((played) => {
          options.onFrame('outbound', encode(toStreamOut(played), format.encoding), null);
        }),
      );
    }
    this.detach.push(session.addDigitTap((digit) => options.onDigit(digit.digit)));
    this.pushed = options.bidirectional ? new PushedSource() : null;
    if (this.pushed) {
      const pushed = this.pushed;
      const counted = {
        get audioBand() {
          return pushed.audioBand;
        },
        ready: (samples: number) => pushed.ready(samples),
        read: (samples: number) => {
          const out = pushed.read(samples);
          if (out && out.length > 0) this.played(out.length);
          return out;
        },
      };
      // Standing: what the call plays besides (a prompt stopped by a key, a Dial's music, a
      // Speak that replaces) never ends it; only the stream's end does.
      session.playStanding(counted);
      // Ended, it plays what is queued and then leaves the queue (its read says so).
      this.detach.push(() => pushed.end());
    }
  }

  /**
   * Queues the server's audio (playAudio). Throws a RangeError for a payload that is not audio
   * of its format, and QueueFullError when it would take the queue past its bound: such a
   * chunk is dropped whole, and what was queued before it plays on.
   */
  enqueue(payload: Buffer, format: StreamAudioFormat, receivedAt = performance.now()): void {
    if (!this.pushed || this.closed) throw new Error('this stream does not play audio');
    if (payload.length === 0) throw new RangeError('Expected audio in the payload but it is empty');
    let pcm: Int16Array;
    if (format.encoding === 'l16') {
      if (payload.length % 2 !== 0) {
        throw new RangeError(
          `Expected 16-bit samples (an even number of bytes) but received ${payload.length} bytes`,
        );
      }
      pcm = littleEndianL16(payload);
    } else {
      pcm = muLawDecode(payload);
    }
    if (format.rate !== this.session.rate) pcm = this.resampled(pcm, format.rate);
    if (this.pushed.queued + pcm.length > this.maxQueued) {
      throw new QueueFullError(
        `the playout queue holds at most ${this.maxQueued / this.session.rate} s of audio; this chunk of ${(pcm.length / this.session.rate).toFixed(2)} s was dropped`,
      );
    }
    this.arrivals.push({ at: this.pushedTotal, receivedAt });
    // What the server sends at 8 kHz holds nothing above 4 kHz, whatever the call's rate.
    this.pushed.audioBand = Math.min(format.rate, this.session.rate) / 2;
    this.pushed.push(pcm);
    this.pushedTotal += pcm.length;
    // A frame goes as the audio arrives when it is due, not at the next tick; audio that came
    // ahead of time waits its turn in the queue, so the call hears it at real time.
    this.session.sendNow(Math.floor(this.pushed.queued / (this.session.rate / 50)));
  }

  /** Calls `onPlayed` once everything queued so far has been played out to the call. */
  checkpoint(onPlayed: () => void): void {
    if (!this.pushed) throw new Error('this stream does not play audio');
    if (this.playedTotal >= this.pushedTotal) {
      onPlayed();
      return;
    }
    this.checkpoints.push({ at: this.pushedTotal, onPlayed });
  }

  /** Drops the queued audio at once, and the checkpoints waiting on it (never reported). */
  clear(): void {
    if (!this.pushed) throw new Error('this stream does not play audio');
    this.pushed.clear();
    // What comes next starts afresh, without the tail of what was dropped.
    this.toCall = null;
    this.pushedTotal = this.playedTotal;
    this.checkpoints = [];
    this.arrivals = [];
  }

  /** Sends digits into the call (RFC 4733, or tones when the peer has no telephone-event). */
  sendDigits(digits: string): Promise<boolean> {
    return this.session.sendDigits(digits);
  }

  /**
   * Ends the stream's audio. What the server queued is dropped (the stream was stopped, timed
   * out or broke: the caller must not go on hearing the bot for up to the queue's length,
   * with no clearAudio possible any more), unless `drain`: the server closed cleanly after
   * its last words, which then play out.
   */
  close(drain = false): void {
    if (this.closed) return;
    this.closed = true;
    this.checkpoints = [];
    if (!drain) this.pushed?.clear();
    for (const undo of this.detach.splice(0)) undo();
  }

  private played(samples: number): void {
    const from = this.playedTotal;
    this.playedTotal += samples;
    while (this.arrivals.length > 0 && this.arrivals[0]!.at < this.playedTotal) {
      const arrival = this.arrivals.shift()!;
      if (arrival.at >= from) {
        this.options.onPlayoutLatency?.((performance.now() - arrival.receivedAt) / 1000);
      }
    }
    while (this.checkpoints.length > 0 && this.checkpoints[0]!.at <= this.playedTotal) {
      this.checkpoints.shift()!.onPlayed();
    }
  }

  private resampled(pcm: Int16Array, rate: SampleRate): Int16Array {
    if (this.toCall?.fromRate !== rate) this.toCall = new Resampler(rate, this.session.rate);
    return this.toCall.process(pcm);
  }

  /** The call's rate to the stream's, sample for sample when they are the same. */
  private converter(rate: SampleRate): (frame: Int16Array) => Int16Array {
    if (rate === this.session.rate) return (frame) => frame;
    const resampler = new Resampler(this.session.rate, rate);
    return (frame) => resampler.process(frame);
  }
}

function encode(pcm: Int16Array, encoding: StreamAudioFormat['encoding']): Buffer {
  if (encoding === 'mulaw') return muLawEncode(pcm);
  // Little-endian, as the protocol says; this machine's order is checked once.
  if (LITTLE_ENDIAN) return Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  const out = Buffer.alloc(pcm.length * 2);
  for (let i = 0; i < pcm.length; i++) out.writeInt16LE(pcm[i]!, i * 2);
  return out;
}

function littleEndianL16(payload: Buffer): Int16Array {
  const out = new Int16Array(payload.length / 2);
  if (LITTLE_ENDIAN) {
    new Uint8Array(out.buffer).set(payload);
    return out;
  }
  for (let i = 0; i < out.length; i++) out[i] = payload.readInt16LE(i * 2);
  return out;
}

/** Frames a stream's inbound track may run behind (then silence fills) or ahead (then late). */
const LATE_FRAMES = 3;

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
