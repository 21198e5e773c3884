import { formatCallbackTime } from '../core/record-time.js';
import type { LegEnd } from './legs/leg-end.js';

/**
 * The parameters a hangup callback adds to a call's own (voice document): how it ended and
 * its times, Duration from the start and BillDuration from the answer, in whole seconds.
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
    Duration: String(Math.round((times.end - times.initiation) / 1000)),
    BillDuration: String(times.answer === null ? 0 : Math.round((times.end - times.answer) / 1000)),
  };
}
