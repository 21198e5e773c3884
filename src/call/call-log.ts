import type { Call, CallServices } from './call.js';
import type { LegEnd } from './legs/leg-end.js';

/**
 * Hangup causes that say something is wrong on this side or with what it was asked to reach
 * (5020 Routing Error, 3020 Rejected, 4240 sip_auth_failed, 5010 Internal Error): a call ending
 * with one is a warning that names why, where other ends are the info line of any call.
 */
const WARNED_CAUSES: ReadonlySet<number> = new Set([5020, 3020, 4240, 5010]);

type CallLog = CallServices['log'];

/** The ids every line of a call carries, so that one search finds all of them. */
function callIds(call: Call): Record<string, unknown> {
  const { init } = call;
  return {
    callUuid: call.uuid,
    ...(init.requestUuid ? { requestUuid: init.requestUuid } : {}),
    direction: call.direction,
    from: init.from,
    to: init.to,
    authId: init.owner.authId,
  };
}

/** One line when a call is created (POST Call/, outbound) or arrives (an INVITE, inbound). */
export function logCallStarted(log: CallLog, call: Call): void {
  log.info(callIds(call), call.direction === 'inbound' ? 'call arrived' : 'call created');
}

export function logCallAnswered(log: CallLog, call: Call): void {
  log.info(callIds(call), 'call answered');
}

/**
 * One line when it ends: its cause, who ended it, and how long it lasted (`duration` from the
 * answer, 0 unanswered; `totalDuration` from its start), in seconds.
 */
export function logCallEnded(log: CallLog, call: Call, end: LegEnd): void {
  const { initiation, answer, end: ended = initiation } = call.leg.times;
  const fields = {
    ...callIds(call),
    hangupCauseCode: end.cause.code,
    hangupCauseName: end.cause.name,
    hangupSource: end.source,
    callStatus: end.status,
    duration: answer === undefined ? 0 : (ended - answer) / 1000,
    totalDuration: (ended - initiation) / 1000,
    ...(end.sipStatus ? { sipStatus: end.sipStatus } : {}),
  };
  if (!WARNED_CAUSES.has(end.cause.code)) {
    log.info(end.reason ? { ...fields, reason: end.reason } : fields, 'call ended');
    return;
  }
  // The same message as any end, so that one search finds every call's end; the level and
  // the reason say what went wrong.
  log.warn({ ...fields, reason: end.reason ?? end.cause.name }, 'call ended');
}
