import { randomUUID } from 'node:crypto';
import { locateSipServers, type SipDns } from '../../sip/dialog/server-locator.js';
import { parseUri } from '../../sip/message/index.js';
import type { Destination } from '../../sip/transport/transport-layer.js';
import type { OriginationUriRecord, TrunkRecord } from '../../state/records.js';
import type { Call, CallServices } from '../call.js';
import { bridged, type BridgeSettings } from '../dial.js';
import { EarlyMedia, relayable } from '../early-media.js';
import { hangupCause } from '../hangup-causes.js';
import type { CallLeg, LegEnvironment } from '../legs/call-leg.js';
import type { LegEnd } from '../legs/leg-end.js';
import { OutboundLeg } from '../legs/outbound-leg.js';
import { writeLegRecord } from '../leg-record.js';
import { originationSipUri, type OriginationProbes } from './origination-probes.js';

export interface TrunkDeps {
  services: CallServices;
  legs: LegEnvironment;
  dns: SipDns;
  probes: OriginationProbes;
  /** How long a URI has to respond at all (a 100 Trying is enough) before the next is tried. */
  responseTimeoutMs: number;
  /** How long a URI may ring before the next is tried; 0: as long as the caller waits. */
  answerTimeoutMs: number;
  /** Sends the caller 180 Ringing (when a PBX rings). */
  ringCaller?: () => void;
}

/** A trunk call's bridge: no limit beyond the caller's, no events to any application. */
const TRUNK_BRIDGE: BridgeSettings = {
  timeLimit: 24 * 60 * 60,
  hangupOnStar: false,
  digitsMatch: [],
  callbackUrl: null,
  callbackMethod: 'POST',
};

/** One server of one origination URI to send the INVITE to. */
interface Attempt {
  uri: OriginationUriRecord;
  role: 'primary' | 'fallback';
  requestUri: string;
  destination: Destination;
  /** The trunk's SRTP policy. */
  srtp: TrunkRecord['srtp'];
}

type Outcome =
  /** The call is settled: bridged and over, relayed a final answer, or the caller left. */
  | { kind: 'done' }
  /** This server did not take the call: why, and the next may be tried. */
  | { kind: 'next'; reason: string; end: LegEnd; sipStatus: number };

/**
 * Inbound trunking (SIP document, "Attach URIs to an inbound trunk"): a call for a number on
 * a trunk is relayed, back to back, to the trunk's primary origination URI, and to its
 * fallback when the primary is down by its probes, does not resolve, does not respond within
 * responseTimeoutMs (or answer within answerTimeoutMs when set), or answers 5xx or 6xx. Each
 * URI's servers come from RFC 3263 (NAPTR, SRV, A/AAAA) and are tried in order. A 4xx is the
 * callee's answer (486 busy, 404...) and goes back to the caller as it came. The caller is
 * answered when the PBX answers; audio is relayed undecoded when both legs settled on the
 * same codec, mixed otherwise. Each leg tried gets its own record, child of the caller's.
 */
export async function relayToTrunk(call: Call, trunk: TrunkRecord, deps: TrunkDeps): Promise<void> {
  const { state } = deps.services;
  const reasons: string[] = [];
  let last: { end: LegEnd; sipStatus: number } | null = null;
  const candidates = [
    { role: 'primary' as const, uuid: trunk.primary_uri_uuid },
    ...(trunk.fallback_uri_uuid
      ? [{ role: 'fallback' as const, uuid: trunk.fallback_uri_uuid }]
      : []),
  ];
  let deleted = 0;
  for (const { role, uuid } of candidates) {
    if (call.over) return;
    const uri = await state.originationUris.get(trunk.account, uuid);
    if (!uri) {
      deleted++;
      reasons.push(`${role} origination URI ${uuid} was deleted`);
      continue;
    }
    const down = deps.probes.downReason(uuid);
    if (down) {
      reasons.push(`${role} ${uri.uri} is down (${down})`);
      continue;
    }
    const requestUri = originationSipUri(uri.uri, call.init.to);
    let destinations: Destination[];
    try {
      destinations = await locateSipServers(parseUri(requestUri), deps.dns);
    } catch (error) {
      reasons.push(`${role} ${uri.uri} cannot be located: ${(error as Error).message}`);
      continue;
    }
    for (const destination of destinations) {
      const lastAttempt = role === candidates.at(-1)!.role && destination === destinations.at(-1);
      const outcome = await attempt(
        call,
        { uri, role, requestUri, destination, srtp: trunk.srtp },
        deps,
        lastAttempt,
      );
      if (outcome.kind === 'done') return;
      reasons.push(`${role} ${uri.uri} at ${where(destination)}: ${outcome.reason}`);
      last = outcome;
    }
  }
  if (call.over) return;
  call.log('trunk call failed', { trunkId: trunk.trunk_id, reasons });
  const allDeleted = deleted === candidates.length;
  await call.hangup(
    last && !allDeleted
      ? { ...last.end, source: 'Callee', status: 'failed', sipStatus: last.sipStatus }
      : {
          cause: hangupCause(allDeleted ? 'Routing Error' : 'Destination Out Of Service'),
          source: 'Service',
          status: 'failed',
          sipStatus: allDeleted ? 404 : 503,
          reason: allDeleted
            ? `every origination URI of trunk ${trunk.trunk_id} was deleted`
            : `no origination URI of trunk ${trunk.trunk_id} answered`,
        },
  );
}

const where = (d: Destination) =>
  `${d.protocol} ${d.address.address.includes(':') ? `[${d.address.address}]` : d.address.address}:${d.address.port}`;

async function attempt(
  call: Call,
  target: Attempt,
  deps: TrunkDeps,
  lastAttempt: boolean,
): Promise<Outcome> {
  const { legs, services } = deps;
  const { uri } = target;
  const leg = OutboundLeg.dial(legs, {
    uuid: randomUUID(),
    near: call.leg.uuid,
    target: target.requestUri,
    destination: target.destination,
    ...(target.srtp && { srtp: target.srtp }),
    from: `sip:${call.init.from || 'anonymous'}@${legs.publicHost}`,
    fromDisplayName: call.init.callerName ?? undefined,
    credentials:
      uri.authentication_needed && uri.username && uri.password
        ? { username: uri.username, password: uri.password }
        : undefined,
  });
  call.trackChildLeg(leg, { from: call.init.from, to: call.init.to });
  void leg.ended.then((end) =>
    writeLegRecord(services, leg, end, {
      requestUuid: null,
      from: call.init.from,
      to: call.init.to,
      owner: call.init.owner,
      sourceIp: call.init.sourceIp,
      parentCallUuid: call.uuid,
    }),
  );

  let gaveUp: string | null = null;
  const giveUp = (reason: string, end: LegEnd) => {
    gaveUp = reason;
    void leg.hangup(end);
  };
  const timers = [
    legs.scheduler.after(deps.responseTimeoutMs, () => {
      if (!leg.responded && !leg.isOver)
        giveUp(`no response in ${deps.responseTimeoutMs} ms`, {
          cause: hangupCause('Request timeout'),
          source: 'Service',
          status: 'timeout',
        });
    }),
    ...(deps.answerTimeoutMs > 0 && !lastAttempt
      ? [
          legs.scheduler.after(deps.answerTimeoutMs, () => {
            if (leg.state !== 'answered' && !leg.isOver)
              giveUp(`no answer in ${deps.answerTimeoutMs} ms`, {
                cause: hangupCause('No Answer'),
                source: 'Service',
                status: 'no-answer',
              });
          }),
        ]
      : []),
  ];
  let passTo: CallLeg | null = null;
  const early = new EarlyMedia(call, legs);
  const answered = new Promise<boolean>((resolve) => {
    leg.events = {
      onAnswered: () => {
        call.childLegChanged();
        resolve(true);
      },
      onRinging: () => deps.ringCaller?.(),
      // The PBX's 183 with SDP: its announcements or ringback reach the caller before the answer.
      onEarlyMedia: () => void early.start(leg),
      // Tones in the audio cross the bridge as audio; events and INFO are sent on.
      onDigit: (digit, via) => {
        if (passTo && via !== 'inband') void passTo.sendDigits(digit);
      },
    };
    void leg.ended.then(() => resolve(false));
  });
  // A caller who leaves before the answer cancels the attempt (after it, the bridge ends it).
  const callerLeft = () =>
    leg.state === 'answered'
      ? undefined
      : leg.hangup({ cause: hangupCause('Canceled'), source: 'Caller', status: 'no-answer' });
  void call.leg.ended.then(callerLeft);
  const ok = await answered;
  for (const timer of timers) timer.cancel();
  // Bridged again below with what the answer settled, or not at all when there was none.
  await early.stop();

  if (ok && !call.over) {
    const same = relayable(call.leg, leg);
    services.log.info(
      {
        callUuid: call.uuid,
        legUuid: leg.uuid,
        uri: uri.uri,
        role: target.role,
        media: same ? 'relay' : 'mix',
      },
      'trunk call connected',
    );
    const dialled = {
      leg,
      confirmed: Promise.resolve(true),
      passDigitsTo: (to: CallLeg | null) => (passTo = to),
    };
    await bridged(
      call,
      dialled,
      TRUNK_BRIDGE,
      { legs, answerCaller: () => call.answer() },
      same ? 'relay' : 'mix',
    );
    if (!call.over)
      await call.hangup({
        cause: hangupCause('Normal Hangup'),
        source: 'Callee',
        status: 'completed',
      });
    return { kind: 'done' };
  }
  const end = await leg.ended;
  if (call.over) return { kind: 'done' };
  if (gaveUp) return { kind: 'next', reason: gaveUp, end, sipStatus: 503 };
  // RFC 3261 13.3.1.1 keeps 488 for an offer that cannot be accepted: the caller learns the
  // PBX's answer was unusable, if no other server takes the call.
  if (leg.mediaProblem) return { kind: 'next', reason: leg.mediaProblem, end, sipStatus: 488 };
  const failure = leg.failure;
  if (failure?.kind === 'rejected' && failure.status >= 400 && failure.status < 500) {
    // The callee's own answer (busy, not found, declined): the caller gets it as it came.
    await call.hangup({ ...end, sipStatus: failure.status });
    return { kind: 'done' };
  }
  const reason = failure ? `${failure.status} ${failure.reason}` : end.cause.name;
  return { kind: 'next', reason, end, sipStatus: 503 };
}
