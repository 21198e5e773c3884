import type { SampleRate } from '../codec/argument-checks.js';
import { Resampler } from '../codec/resampler.js';
import type { MediaSession } from '../pipeline/media-session.js';
import { PushedSource } from '../playout/playout-source.js';
import type { RecordingOutcome } from '../recording/recording-spec.js';
import { ConferenceFloor } from './conference-floor.js';
import type { ConferenceRecorder } from './conference-recorder.js';

/** What a member may do: be heard (not muted), and hear (not deaf). */
export interface MemberFlags {
  muted: boolean;
  deaf: boolean;
}

/** Frames of a member's voice kept waiting for the mix; more means the mix fell behind. */
const MAX_WAITING_FRAMES = 3;
/** More than this much of the mix (100 ms) waiting to be played to a member: start afresh. */
const MAX_QUEUED_MS = 100;

/**
 * What the mixer needs of a member's leg: its rate, its voice (a tap) and a way to play the
 * mix into it. A MediaSession on this worker, or the far end of a link to one on another.
 */
export type MemberSession = Pick<MediaSession, 'rate' | 'addTap' | 'play' | 'paceByTicks'>;

interface Member extends MemberFlags {
  session: MemberSession;
  /** Frames heard from the member, at its own rate, not mixed yet. */
  waiting: Int16Array[];
  /** What the member hears, played into its session. */
  heard: PushedSource;
  /** Between the member's rate and the mix's; null when they are the same. */
  toMix: Resampler | null;
  fromMix: Resampler | null;
  stop: () => void;
}

/**
 * One conference on one worker (DESIGN.md: mixing in the worker that holds the conference).
 * On every tick of the worker's clock each member's frame is taken, brought to the mix rate
 * (16 kHz when every member's leg is at 16 kHz or more, else 8 kHz) and summed; each member
 * who is not deaf hears the sum less their own voice, saturated to 16 bits, at their own rate.
 * A muted member's voice is left out of the sum. The audio moves as Dial's bridge moves it: a
 * tap on each session, a pushed source played into each. The loudest voice of each tick goes
 * to the floor (ConferenceFloor), which tells `onFloor` of each member who takes it.
 */
export class ConferenceMixer {
  private readonly members = new Map<string, Member>();
  private readonly recorders = new Set<ConferenceRecorder>();
  private mixRate: SampleRate = 8000;
  private readonly stopTicking: () => void;
  private readonly floor: ConferenceFloor;

  constructor(
    clock: { add(tick: () => void): () => void },
    onFloor: (sessionId: string) => void = () => {},
  ) {
    this.stopTicking = clock.add(() => this.mix());
    this.floor = new ConferenceFloor(onFloor);
  }

  get size(): number {
    return this.members.size;
  }

  /** The rate the conference mixes at now. */
  get rate(): SampleRate {
    return this.mixRate;
  }

  has(sessionId: string): boolean {
    return this.members.has(sessionId);
  }

  join(sessionId: string, session: MemberSession, flags: MemberFlags): void {
    if (this.members.has(sessionId)) throw new Error(`session ${sessionId} is already a member`);
    const heard = new PushedSource();
    // The mix comes on the same ticks as the member's own frames: played without ready(), as
    // Dial's bridge plays the far leg.
    void session.play({ read: (samples) => heard.read(samples) }, 'mix');
    const member: Member = {
      ...flags,
      session,
      waiting: [],
      heard,
      toMix: null,
      fromMix: null,
      stop: () => {},
    };
    const removeTap = session.addTap((frame) => {
      if (member.waiting.length >= MAX_WAITING_FRAMES) member.waiting.shift();
      member.waiting.push(frame);
    });
    // A stream's playAudio on the member goes out on the ticks, in step with the mix.
    const unpace = session.paceByTicks();
    member.stop = () => {
      removeTap();
      unpace();
      heard.clear();
      heard.end();
    };
    this.members.set(sessionId, member);
    this.settleRate();
  }

  /** Takes a member out; says whether it was one. */
  leave(sessionId: string): boolean {
    const member = this.members.get(sessionId);
    if (!member) return false;
    this.members.delete(sessionId);
    this.floor.leave(sessionId);
    member.stop();
    this.settleRate();
    return true;
  }

  update(sessionId: string, flags: Partial<MemberFlags>): boolean {
    const member = this.members.get(sessionId);
    if (!member) return false;
    if (flags.muted !== undefined) member.muted = flags.muted;
    if (flags.deaf !== undefined) {
      member.deaf = flags.deaf;
      if (flags.deaf) member.heard.clear();
    }
    return true;
  }

  /** Hands `recorder` the whole mix on every tick until it ends. */
  record(recorder: ConferenceRecorder): void {
    this.recorders.add(recorder);
    void recorder.ended.then(() => this.recorders.delete(recorder));
  }

  /** Stops one recording, or all; how many were running. */
  stopRecording(recordingId?: string, reason: RecordingOutcome['reason'] = 'stopped'): number {
    const chosen = [...this.recorders].filter(
      (r) => recordingId === undefined || r.recordingId === recordingId,
    );
    for (const recorder of chosen) {
      this.recorders.delete(recorder);
      void recorder.stop(reason);
    }
    return chosen.length;
  }

  /** Takes every member out, ends its recordings and stops mixing. */
  close(): void {
    for (const sessionId of [...this.members.keys()]) this.leave(sessionId);
    this.stopRecording(undefined, 'session-closed');
    this.stopTicking();
  }

  /** 16 kHz when every member's leg carries it, else 8 kHz; resamplers follow. */
  private settleRate(): void {
    let rate: SampleRate = 16000;
    for (const member of this.members.values()) if (member.session.rate < 16000) rate = 8000;
    const changed = rate !== this.mixRate;
    this.mixRate = rate;
    for (const member of this.members.values()) {
      const own = member.session.rate;
      if (!changed && (member.toMix !== null || own === rate)) continue;
      member.toMix = own === rate ? null : new Resampler(own, rate);
      member.fromMix = own === rate ? null : new Resampler(rate, own);
    }
  }

  private mix(): void {
    if (this.members.size === 0) return;
    const length = this.mixRate / 50;
    const voices: (Int16Array | null)[] = [];
    const total = new Int32Array(length);
    let speaking = 0;
    let loudest: string | null = null;
    let loudestEnergy = 0;
    for (const [sessionId, member] of this.members) {
      const frame = member.waiting.shift();
      const voice =
        frame === undefined || member.muted
          ? null
          : fitted(member.toMix?.process(frame) ?? frame, length);
      voices.push(voice);
      if (voice === null) continue;
      speaking++;
      let energy = 0;
      for (let i = 0; i < length; i++) {
        const sample = voice[i]!;
        total[i]! += sample;
        energy += sample * sample;
      }
      if (energy > loudestEnergy) {
        loudest = sessionId;
        loudestEnergy = energy;
      }
    }
    this.floor.tick(loudest, loudestEnergy, length);
    if (this.recorders.size > 0) {
      const whole = speaking === 0 ? null : saturated(total, null);
      for (const recorder of this.recorders) recorder.take(whole, this.mixRate);
    }
    if (speaking === 0) return;
    let index = 0;
    for (const member of this.members.values()) {
      const own = voices[index++]!;
      // Nobody else spoke: the member hears nothing new.
      if (member.deaf || (own !== null && speaking === 1)) continue;
      const out = saturated(total, own);
      const heard = member.fromMix ? member.fromMix.process(out) : out;
      const limit = (member.session.rate * MAX_QUEUED_MS) / 1000;
      if (member.heard.queued > limit) member.heard.clear();
      member.heard.push(heard);
    }
  }
}

/** The sum less `own` (when given), saturated to 16 bits. */
function saturated(total: Int32Array, own: Int16Array | null): Int16Array {
  const out = new Int16Array(total.length);
  for (let i = 0; i < total.length; i++) {
    const sample = total[i]! - (own === null ? 0 : own[i]!);
    out[i] = sample > 32767 ? 32767 : sample < -32768 ? -32768 : sample;
  }
  return out;
}

/** A frame of exactly `length` samples (a resampler's first output is a little short). */
function fitted(frame: Int16Array, length: number): Int16Array {
  if (frame.length === length) return frame;
  const out = new Int16Array(length);
  out.set(frame.subarray(0, length), length - Math.min(length, frame.length));
  return out;
}
