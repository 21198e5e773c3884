import { randomUUID } from 'node:crypto';
import type { Destination } from '../sip/transport/transport-layer.js';
import type { Call, CallServices } from './call.js';
import { hangupCause } from './hangup-causes.js';
import type { LegEnvironment } from './legs/call-leg.js';
import type { LegEnd } from './legs/leg-end.js';
import { OutboundLeg } from './legs/outbound-leg.js';
import { writeLegRecord } from './leg-record.js';
import { outboundSipHeaders } from './outbound-request.js';
import type { DialInstruction, DialTarget } from './xml/answer-document.js';

export interface DialDeps {
  services: CallServices;
  legs: LegEnvironment;
  /** The Request-URI for a phone number (through the carrier); null when none is set. */
  numberTarget(number: string): string | null;
  /**
   * For a caller not answered yet (a call straight to an endpoint): answers it when a B leg
   * answers, and no ringback is played meanwhile (the caller hears its own, on 180).
   */
  answerCaller?: () => void;
  /** A SIP URI's target (a registered endpoint's contact); null when it is not registered. */
  sipTarget(uri: string): Promise<{ target: string; destination?: Destination } | null>;
}

/** US ringback: 440 + 480 Hz, 2 s on, 4 s off, played to the caller while the B leg rings. */
const RINGBACK_TONE_MS = 2000;
const RINGBACK_PAUSE_MS = 4000;

/**
 * Dial: rings every target at once from the caller's media worker; the first to answer is
 * bridged with the caller (audio both ways through the media plane) and the others are
 * cancelled. It resolves when the B leg is over, with the action parameters (DialStatus,
 * DialALegUUID, DialBLegUUID, DialHangupCause). Each B leg gets its own record, billed once
 * answered, with the caller as its parent. A caller who hangs up ends the B leg too.
 */
export async function runDial(
  call: Call,
  instruction: DialInstruction,
  deps: DialDeps,
): Promise<Record<string, string>> {
  const aLeg = call.leg;
  const dialled = instruction.targets.map((target) => placeB(call, instruction, target, deps));
  const ringback = { stopped: false };
  const stopRingback = () => {
    ringback.stopped = true;
    void aLeg.stopPlayback();
  };
  if (deps.answerCaller) {
    ringback.stopped = true;
  } else if (instruction.dialMusic === 'real') {
    void ringbackLoop(call, ringback, deps);
  } else {
    void call.play({ kind: 'file', url: instruction.dialMusic }, { loop: true }).catch(() => false);
  }

  const winner = await firstAnswered(
    dialled.map((d) => d.leg),
    aLeg,
  );
  stopRingback();
  for (const other of dialled) {
    if (other.leg !== winner) {
      void other.leg.hangup({
        cause: hangupCause('Canceled'),
        source: 'Service',
        status: 'no-answer',
      });
    }
  }
  let bLeg = winner ?? dialled[0]!.leg;
  if (winner && !aLeg.isOver) {
    bLeg = winner;
    deps.answerCaller?.();
    call.bLeg = bLeg;
    await deps.legs.media.send({
      type: 'bridge',
      sessionId: aLeg.uuid,
      peerId: bLeg.uuid,
      mode: 'mix',
    });
    const limit = deps.legs.scheduler.after(instruction.timeLimit * 1000, () => {
      void bLeg.hangup({
        cause: hangupCause('Scheduled Hangup'),
        source: 'Service',
        status: 'completed',
      });
    });
    const stopStar = instruction.hangupOnStar
      ? hangupOnStar(call, () =>
          bLeg.hangup({
            cause: hangupCause('Normal Hangup'),
            source: 'Caller',
            status: 'completed',
          }),
        )
      : () => undefined;
    const aEnded = aLeg.ended.then(() =>
      bLeg.hangup({ cause: hangupCause('Normal Hangup'), source: 'Caller', status: 'completed' }),
    );
    await bLeg.ended;
    call.bLeg = null;
    void aEnded;
    limit.cancel();
    stopStar();
    if (!aLeg.isOver) {
      await deps.legs.media.send({ type: 'unbridge', sessionId: aLeg.uuid }).catch(() => undefined);
    }
  } else if (aLeg.isOver) {
    for (const d of dialled)
      void d.leg.hangup({ cause: hangupCause('Canceled'), source: 'Caller', status: 'no-answer' });
  }
  const end = await bLeg.ended;
  return {
    DialStatus: dialStatus(bLeg.times.answer !== undefined, end),
    DialALegUUID: aLeg.uuid,
    DialBLegUUID: bLeg.uuid,
    DialHangupCause: end.cause.name,
  };
}

function placeB(call: Call, instruction: DialInstruction, target: DialTarget, deps: DialDeps) {
  const uuid = randomUUID();
  const to = target.kind === 'Number' ? target.number : target.uri;
  const callerId =
    (target.kind === 'Number' ? target.callerId : null) ?? instruction.callerId ?? call.init.from;
  const callerName =
    (target.kind === 'Number' ? target.callerName : null) ??
    instruction.callerName ??
    call.init.callerName;
  const requestUri = target.kind === 'Number' ? deps.numberTarget(target.number) : target.uri;
  const headers = Object.entries({
    ...instruction.sipHeaders,
    ...(target.kind === 'User' ? target.sipHeaders : {}),
  });
  const leg = OutboundLeg.dial(deps.legs, {
    uuid,
    near: call.leg.uuid,
    target: requestUri ?? 'sip:unroutable@invalid',
    ...(target.kind === 'User' ? { resolve: () => deps.sipTarget(target.uri) } : {}),
    from: `sip:${callerId.replace(/^sip:/, '').replace(/@.*$/, '')}@${deps.legs.publicHost}`,
    fromDisplayName: callerName ?? undefined,
    headers: outboundSipHeaders(
      headers.map(([key, value]) => ({ key, value })),
      { prefixed: true },
    ).map((h) => [h.name, h.value] as [string, string]),
    ringTimeoutSeconds: instruction.timeout ?? undefined,
  });
  if (requestUri === null)
    void leg.hangup({ cause: hangupCause('Routing Error'), source: 'Service', status: 'failed' });
  const sendDigits = target.sendDigits;
  leg.events = {
    onAnswered: () => {
      if (sendDigits) void leg.sendDigits(sendDigits);
    },
  };
  void leg.ended.then((end) =>
    writeLegRecord(deps.services, leg, end, {
      requestUuid: null,
      from: callerId,
      to,
      owner: call.init.owner,
      sourceIp: call.init.sourceIp,
      parentCallUuid: call.uuid,
    }).catch((error: Error) =>
      deps.services.log.warn(
        { err: error, callUuid: uuid },
        'the B leg record could not be written',
      ),
    ),
  );
  return { leg };
}

/** The first leg to answer, or null when none does (or the caller hangs up first). */
function firstAnswered(legs: OutboundLeg[], aLeg: Call['leg']): Promise<OutboundLeg | null> {
  return new Promise((resolve) => {
    let pending = legs.length;
    let settled = false;
    const settle = (leg: OutboundLeg | null) => {
      if (settled) return;
      settled = true;
      resolve(leg);
    };
    for (const leg of legs) {
      const previous = leg.events.onAnswered;
      leg.events = {
        ...leg.events,
        onAnswered: () => {
          previous?.();
          settle(leg);
        },
      };
      void leg.ended.then(() => {
        pending -= 1;
        if (pending === 0) settle(null);
      });
    }
    void aLeg.ended.then(() => settle(null));
  });
}

async function ringbackLoop(
  call: Call,
  state: { stopped: boolean },
  deps: DialDeps,
): Promise<void> {
  while (!call.over && !state.stopped) {
    const tone = { kind: 'tone' as const, frequencies: [440, 480], durationMs: RINGBACK_TONE_MS };
    if (!(await call.play(tone, {}).catch(() => false))) return;
    await new Promise((resolve) =>
      deps.legs.scheduler.after(RINGBACK_PAUSE_MS, () => resolve(undefined)),
    );
  }
}

function hangupOnStar(call: Call, hangup: () => Promise<void>): () => void {
  call.digits.listen();
  let stopped = false;
  const poll = (): void => {
    if (stopped) return;
    void call.digits
      .collect({ timeout: 3600, digitTimeout: 3600, finishOnKey: '*', numDigits: 1000 })
      .then((collected) => {
        if (!stopped && collected.reason === 'finish-key') void hangup();
      });
  };
  poll();
  return () => {
    stopped = true;
    call.digits.stop();
  };
}

function dialStatus(answered: boolean, end: LegEnd): string {
  if (answered) return 'completed';
  if (end.status === 'busy' || end.status === 'no-answer' || end.status === 'timeout')
    return end.status;
  return 'failed';
}
