import type { CallbackRequest } from '../callbacks/index.js';
import { formatCallbackTime } from '../core/record-time.js';
import type { Call } from './call.js';
import type { LegEnd } from './legs/leg-end.js';

/** A call's hangup callback (to its hangup_url): its parameters and how it ended; none without. */
export function hangupCallback(
  call: Pick<Call, 'init' | 'leg' | 'requestParams'>,
  end: LegEnd,
): CallbackRequest | null {
  const { hangup } = call.init.urls;
  if (!hangup) return null;
  const times = call.leg.times;
  return {
    url: hangup.url,
    method: hangup.method,
    accountId: call.init.owner.authId,
    params: {
      ...call.requestParams(),
      ...hangupParams(end, {
        initiation: times.initiation,
        answer: times.answer ?? null,
        end: times.end ?? times.initiation,
      }),
    },
  };
}

/**
 * The parameters a hangup callback adds to a call's own (voice document): how it ended and
 * its times, Duration from the start and BillDuration from the answer, in whole seconds. As on
 * the call record, the times are cut to the second before the durations are taken, so the
 * callback's durations are its own times' and the record's (call_duration, bill_duration).
 */
export function hangupParams(
  end: Pick<LegEnd, 'cause' | 'source' | 'status'>,
  times: { initiation: number; answer: number | null; end: number },
): Record<string, string> {
  return {
    Event: 'Hangup',
    CallStatus: end.status,
    HangupCause: end.cause.name,
    HangupCauseName: end.cause.name,
    HangupCauseCode: String(end.cause.code),
    HangupSource: end.source,
    StartTime: formatCallbackTime(times.initiation),
    AnswerTime: times.answer === null ? '' : formatCallbackTime(times.answer),
    EndTime: formatCallbackTime(times.end),
    Duration: String(second(times.end) - second(times.initiation)),
    BillDuration: String(times.answer === null ? 0 : second(times.end) - second(times.answer)),
  };
}

const second = (ms: number) => Math.floor(ms / 1000);
