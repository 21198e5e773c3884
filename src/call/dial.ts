import { randomUUID } from 'node:crypto';
import { pause } from '../core/scheduler.js';
import type { Call, CallAccount, CallServices } from './call.js';
import { findHangupCauseByName, hangupCause } from './hangup-causes.js';
import type { CallLeg, DigitSource, LegEnvironment } from './legs/call-leg.js';
import type { LegEnd } from './legs/leg-end.js';
import { OutboundLeg, type AttemptPlan, type RoutedTarget } from './legs/outbound-leg.js';
import { writeLegRecord } from './leg-record.js';
import { outboundSipHeaders } from './client-sip-headers.js';
import type { DialInstruction, DialTarget } from './xml/answer-document.js';
import { parseAnswerXml } from './xml/parse-answer-xml.js';
import { loadDialSound, playDialSound } from './dial-sound.js';
import { EarlyMedia, relaysOpus } from './early-media.js';

export interface DialDeps {
  services: CallServices;
  legs: LegEnvironment;
  /** How a leg reaches a phone number (its carriers in turn); null when none is set. */
  numberPlan(uuid: string, number: string, caller: string): (() => Promise<AttemptPlan>) | null;
  /**
   * For a caller not answered yet (a call straight to an endpoint): answers it when a B leg
   * answers, and no ringback is played meanwhile (the caller hears its own, on 180).
   */
  answerCaller?: () => void;
  /** A SIP URI's target (a registered endpoint's contact); null when it is not registered. */
  sipTarget(uri: string, owner: CallAccount): Promise<RoutedTarget | null>;
}

/** US ringback: 440 + 480 Hz, 2 s on, 4 s off, played to the caller while the B leg rings. */
const RINGBACK_TONE_MS = 2000;
const RINGBACK_PAUSE_MS = 4000;
/** How long an answered B leg has to press confirmKey. */
const CONFIRM_TIMEOUT_MS = 10_000;

export interface Dialled {
  leg: OutboundLeg;
  /** True once it answered (and pressed confirmKey when one is asked); false if it never will. */
  confirmed: Promise<boolean>;
  /** From now on its digits go on to `to` (null: they are kept for confirmKey). */
  passDigitsTo(to: CallLeg | null): void;
}

/**
 * Dial: rings every target at once from the caller's media worker; the first to answer (and,
 * with confirmKey, to press it after confirmSound) is bridged with the caller, audio both ways
 * through the media plane, and the others are cancelled. callbackUrl hears the B leg's answer,
 * hangup and digitsMatch events. Digits pressed as RFC 4733 events or SIP INFO on either side
 * are sent on to the other; tones in the audio cross as audio. It resolves when the B leg is
 * over, with the action parameters (DialStatus, DialALegUUID, DialBLegUUID, DialHangupCause).
 * Each B leg gets its own record, billed once answered, with the caller as its parent. A caller
 * who hangs up ends the B leg.
 */
export async function runDial(
  call: Call,
  instruction: DialInstruction,
  deps: DialDeps,
): Promise<Record<string, string>> {
  const aLeg = call.leg;
  const ringback = { stopped: deps.answerCaller !== undefined };
  const music = instruction.dialMusic;
  // dialMusic real: the caller hears the called party's own ringback or announcement when it
  // sends early media, and the gateway's ringback tone while none does.
  const early = music === 'real' ? realRingback(call, ringback, deps) : null;
  const dialled = instruction.targets.map((target) =>
    placeB(call, instruction, target, deps, early?.hooks),
  );
  if (!ringback.stopped) {
    if (music === 'real') void ringbackLoop(call, ringback, deps);
    else
      void loadDialSound(call, music).then((sound) =>
        playDialSound(call, sound, deps.legs.scheduler, {
          loop: true,
          stopped: () => ringback.stopped || call.over,
        }),
      );
  }

  const confirmed = await firstConfirmed(dialled, aLeg);
  const winner = confirmed?.leg ?? null;
  ringback.stopped = true;
  await early?.done();
  void aLeg.stopPlayback();
  for (const other of dialled) {
    if (other.leg !== winner) {
      void other.leg.hangup({
        cause: hangupCause('Canceled'),
        source: 'Service',
        status: 'no-answer',
      });
    }
  }
  if (confirmed && !aLeg.isOver) {
    await bridged(
      call,
      confirmed,
      instruction,
      deps,
      relaysOpus(aLeg, confirmed.leg) ? 'relay' : 'mix',
    );
  } else if (aLeg.isOver) {
    for (const d of dialled) {
      void d.leg.hangup({ cause: hangupCause('Canceled'), source: 'Caller', status: 'no-answer' });
    }
  }
  const { leg: bLeg, end } = winner
    ? { leg: winner, end: await winner.ended }
    : tellingOutcome(
        await Promise.all(dialled.map(async ({ leg }) => ({ leg, end: await leg.ended }))),
      );
  return {
    DialStatus: winner ? 'completed' : dialStatus(end),
    DialALegUUID: aLeg.uuid,
    DialBLegUUID: bLeg.uuid,
    DialHangupCause: end.cause.name,
  };
}

/**
 * Of B legs none of which was connected, the one whose end tells the caller most: one that
 * rang without an answer, else one that was busy, else the first.
 */
function tellingOutcome<L>(outcomes: { leg: L; end: LegEnd }[]): { leg: L; end: LegEnd } {
  const rank = ({ end }: { end: LegEnd }) =>
    end.status === 'no-answer' || end.status === 'timeout' ? 0 : end.status === 'busy' ? 1 : 2;
  return outcomes.reduce((best, next) => (rank(next) < rank(best) ? next : best));
}

/**
 * A call to an endpoint's SIP URI: the endpoint rings while the caller does, the caller is
 * answered when it answers, and otherwise gets the endpoint's outcome (2020 when it is not
 * registered, busy, no answer).
 */
export async function connectToEndpoint(call: Call, uri: string, deps: DialDeps): Promise<void> {
  const document = parseAnswerXml(
    `<Response><Dial><User>${escapeXml(uri)}</User></Dial></Response>`,
  );
  const dial = document.instructions[0] as DialInstruction;
  const result = await runDial(call, dial, { ...deps, answerCaller: () => call.answer() });
  if (call.over) return;
  if (result.DialStatus === 'completed') {
    await call.hangup({
      cause: hangupCause('Normal Hangup'),
      source: 'Callee',
      status: 'completed',
    });
    return;
  }
  const cause = findHangupCauseByName(result.DialHangupCause ?? '') ?? hangupCause('No Answer');
  const status =
    result.DialStatus === 'busy' || result.DialStatus === 'no-answer'
      ? result.DialStatus
      : 'failed';
  await call.hangup({ cause, source: 'Callee', status });
}

const escapeXml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** What a bridge takes from Dial: its limits, and where its events go. */
export type BridgeSettings = Pick<
  DialInstruction,
  'timeLimit' | 'hangupOnStar' | 'digitsMatch' | 'callbackUrl' | 'callbackMethod'
>;

/**
 * The caller and the B leg talk until either hangs up (or timeLimit, or * with hangupOnStar).
 * Audio is mixed through the media plane, or relayed undecoded (`relay`) between legs that
 * share a codec.
 */
export async function bridged(
  call: Call,
  dialled: Dialled,
  instruction: BridgeSettings,
  deps: Pick<DialDeps, 'legs' | 'answerCaller'>,
  mode: 'mix' | 'relay' = 'mix',
) {
  const aLeg = call.leg;
  const bLeg = dialled.leg;
  deps.answerCaller?.();
  call.bLeg = bLeg;
  await deps.legs.media.send({
    type: 'bridge',
    sessionId: aLeg.uuid,
    peerId: bLeg.uuid,
    mode,
  });
  // After the bridge: a recording started now hears the B leg from its first frame.
  call.dialAnswered();
  const callerHungUp = () =>
    bLeg.hangup({ cause: hangupCause('Normal Hangup'), source: 'Caller', status: 'completed' });
  const limit = deps.legs.scheduler.after(instruction.timeLimit * 1000, () => {
    void bLeg.hangup({
      cause: hangupCause('Scheduled Hangup'),
      source: 'Service',
      status: 'completed',
    });
  });
  let typed = '';
  dialled.passDigitsTo(aLeg);
  const stopListening = call.onDigit((digit, via) => {
    if (instruction.hangupOnStar && digit === '*') {
      void callerHungUp();
      return;
    }
    passDigit(bLeg, digit, via);
    if (instruction.digitsMatch.length === 0 || !instruction.callbackUrl) return;
    typed = (typed + digit).slice(-32);
    const match = instruction.digitsMatch.find((pattern) => typed.endsWith(pattern));
    if (match) {
      typed = '';
      dialEvent(call, instruction, bLeg, 'digits', { DialDigitsMatch: match });
    }
  });
  void aLeg.ended.then(callerHungUp);
  await bLeg.ended;
  call.bLeg = null;
  limit.cancel();
  stopListening();
  dialled.passDigitsTo(null);
  if (!aLeg.isOver) {
    await deps.legs.media.send({ type: 'unbridge', sessionId: aLeg.uuid }).catch(() => undefined);
  }
}

/** What a Dial's caller hears of its B legs before one is connected. */
interface BLegHooks {
  earlyMedia(leg: CallLeg): void;
  answered(): void;
}

/**
 * dialMusic `real`: the first B leg to send early media is bridged with the caller while it
 * lasts, and the gateway's ringback tone stops; should that leg fail before the answer, the
 * tone comes back (a caller not answered yet keeps hearing its own). Any B leg's answer ends
 * it, so a confirmSound is heard by the B leg alone.
 */
function realRingback(call: Call, ringback: { stopped: boolean }, deps: DialDeps) {
  const early = new EarlyMedia(call, deps.legs);
  const toneAgain = deps.answerCaller === undefined;
  let over = false;
  const hooks: BLegHooks = {
    earlyMedia: (leg) => {
      if (over || early.leg !== null || call.over) return;
      ringback.stopped = true;
      void call.leg.stopPlayback();
      early.start(leg, 'mix');
      void leg.ended.then(async () => {
        if (early.leg !== leg) return;
        await early.stop();
        if (over || call.over || !toneAgain || leg.times.answer !== undefined) return;
        ringback.stopped = false;
        void ringbackLoop(call, ringback, deps);
      });
    },
    answered: () => void early.stop(),
  };
  return {
    hooks,
    /** The Dial has its B leg, or none: early media is over for good. */
    done: () => {
      over = true;
      return early.stop();
    },
  };
}

/** One B leg; a User target rings every registration of its user (see OutboundLeg). */
function placeB(
  call: Call,
  instruction: DialInstruction,
  target: DialTarget,
  deps: DialDeps,
  hooks?: BLegHooks,
): Dialled {
  const uuid = randomUUID();
  const to = target.kind === 'Number' ? target.number : target.uri;
  const callerId =
    (target.kind === 'Number' ? target.callerId : null) ?? instruction.callerId ?? call.init.from;
  const callerName =
    (target.kind === 'Number' ? target.callerName : null) ??
    instruction.callerName ??
    call.init.callerName;
  const callerUser = callerId.replace(/^sip:/, '').replace(/@.*$/, '');
  const plan = target.kind === 'Number' ? deps.numberPlan(uuid, target.number, callerUser) : null;
  const headers = Object.entries({
    ...instruction.sipHeaders,
    ...(target.kind === 'User' ? target.sipHeaders : {}),
  });
  const leg = OutboundLeg.dial(deps.legs, {
    uuid,
    near: call.leg.uuid,
    target: target.kind === 'User' ? target.uri : 'sip:unroutable@invalid',
    ...(plan && { plan }),
    ...(target.kind === 'User' && { resolve: () => deps.sipTarget(target.uri, call.init.owner) }),
    from: `sip:${callerUser}@${deps.legs.publicHost}`,
    fromDisplayName: callerName ?? undefined,
    headers: outboundSipHeaders(
      headers.map(([key, value]) => ({ key, value })),
      { prefixed: true },
    ).map((h) => [h.name, h.value] as [string, string]),
    ringTimeoutSeconds: instruction.timeout ?? undefined,
  });
  call.trackChildLeg(leg, { from: callerId, to });
  if (target.kind === 'Number' && plan === null) {
    void leg.hangup({ cause: hangupCause('Routing Error'), source: 'Service', status: 'failed' });
  }
  const bDigits: string[] = [];
  let passTo: CallLeg | null = null;
  let digitsSent = false;
  let resolveConfirmed!: (confirmed: boolean) => void;
  const confirmed = new Promise<boolean>((resolve) => (resolveConfirmed = resolve));
  leg.events = {
    onDigit: (digit, via) => {
      if (passTo) passDigit(passTo, digit, via);
      else bDigits.push(digit);
    },
    // sendOnPreanswer: the digits go at early media (an IVR that listens before it answers),
    // or at the answer when none came.
    onEarlyMedia: () => {
      hooks?.earlyMedia(leg);
      if (!target.sendDigits || !sendsOnPreanswer(target) || digitsSent) return;
      digitsSent = true;
      void leg.sendDigits(target.sendDigits);
    },
    onAnswered: () => {
      hooks?.answered();
      call.childLegChanged();
      if (target.sendDigits && !digitsSent) void leg.sendDigits(target.sendDigits);
      digitsSent = true;
      dialEvent(call, instruction, leg, 'answer', {});
      void confirm(call, leg, instruction, bDigits, deps).then(resolveConfirmed);
    },
  };
  void leg.ended.then((end) => {
    resolveConfirmed(false);
    if (leg.times.answer !== undefined) {
      dialEvent(call, instruction, leg, 'hangup', { DialBLegHangupCause: end.cause.name });
    }
    return writeLegRecord(deps.services, leg, end, {
      requestUuid: null,
      from: callerId,
      to,
      owner: call.init.owner,
      sourceIp: call.init.sourceIp,
      parentCallUuid: call.uuid,
    });
  });
  return { leg, confirmed, passDigitsTo: (to) => (passTo = to) };
}

/**
 * Sends a digit pressed on one side of a bridge on to the other, regenerated there (RFC 4733,
 * or tones to a peer without telephone-event). A digit heard as tones is left alone: the tones
 * themselves cross the bridge as audio, and sending it again would press it twice.
 */
function passDigit(to: CallLeg, digit: string, via: DigitSource): void {
  if (via === 'inband') return;
  void to.sendDigits(digit);
}

/**
 * confirmKey: the answered B leg hears confirmSound (XML of Play, Speak and Wait, or an audio
 * file) and must press the key; another key, or none within 10 s, hangs it up as if it had not
 * answered.
 */
async function confirm(
  call: Call,
  leg: OutboundLeg,
  instruction: DialInstruction,
  digits: string[],
  deps: DialDeps,
): Promise<boolean> {
  const key = instruction.confirmKey;
  if (!key) return true;
  digits.length = 0;
  if (instruction.confirmSound) {
    const url = instruction.confirmSound;
    void loadDialSound(call, url).then((sound) =>
      playDialSound(leg, sound, deps.legs.scheduler, { loop: false, stopped: () => leg.isOver }),
    );
  }
  const deadline = deps.legs.scheduler.now() + CONFIRM_TIMEOUT_MS;
  while (!leg.isOver && deps.legs.scheduler.now() < deadline) {
    const pressed = digits.shift();
    if (pressed === key) {
      await leg.stopPlayback();
      return true;
    }
    if (pressed !== undefined) break;
    await pause(deps.legs.scheduler, 20);
  }
  await leg.hangup({ cause: hangupCause('Rejected'), source: 'Service', status: 'no-answer' });
  return false;
}

/** The first leg confirmed, or null when none is (or the caller hangs up first). */
function firstConfirmed(dialled: Dialled[], aLeg: Call['leg']): Promise<Dialled | null> {
  return new Promise((resolve) => {
    let pending = dialled.length;
    let settled = false;
    const settle = (winner: Dialled | null) => {
      if (settled) return;
      settled = true;
      resolve(winner);
    };
    for (const each of dialled) {
      void each.confirmed.then((ok) => {
        if (ok) settle(each);
        else if (--pending === 0) settle(null);
      });
    }
    void aLeg.ended.then(() => settle(null));
  });
}

/** A Dial event to callbackUrl (DialAction answer, hangup or digits), when one is set. */
function dialEvent(
  call: Call,
  instruction: BridgeSettings,
  bLeg: OutboundLeg,
  action: 'answer' | 'hangup' | 'digits',
  extra: Record<string, string>,
): void {
  if (!instruction.callbackUrl) return;
  void call.notify(instruction.callbackUrl, instruction.callbackMethod, {
    ...call.requestParams(),
    DialAction: action,
    DialALegUUID: call.uuid,
    DialBLegUUID: bLeg.uuid,
    DialBLegStatus: action === 'hangup' ? 'hangup' : 'answer',
    ...extra,
  });
}

async function ringbackLoop(
  call: Call,
  state: { stopped: boolean; loops?: number },
  deps: DialDeps,
): Promise<void> {
  // A loop started again (after a B leg's early media failed) replaces any still pausing.
  const mine = (state.loops = (state.loops ?? 0) + 1);
  while (!call.over && !state.stopped && state.loops === mine) {
    const tone = { kind: 'tone' as const, frequencies: [440, 480], durationMs: RINGBACK_TONE_MS };
    if (!(await call.play(tone, {}).catch(() => false))) return;
    await new Promise((resolve) =>
      deps.legs.scheduler.after(RINGBACK_PAUSE_MS, () => resolve(undefined)),
    );
  }
}

/** How a B leg that was never connected ended, as DialStatus. */
function dialStatus(end: LegEnd): string {
  if (end.status === 'busy' || end.status === 'no-answer' || end.status === 'timeout')
    return end.status;
  return 'failed';
}

const sendsOnPreanswer = (target: DialTarget): boolean =>
  target.kind === 'Number' && target.sendOnPreanswer;
