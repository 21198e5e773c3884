import { setImmediate as turn } from 'node:timers/promises';
import { AnswerApp } from '../../src/call/app/answer-app.js';
import type { AppCall } from '../../src/call/app/app-call.js';
import { DigitCollector } from '../../src/call/app/digit-collector.js';
import type { LegEnd } from '../../src/call/legs/leg-end.js';
import { ManualScheduler } from '../../src/core/scheduler.js';

/**
 * An answer-XML application run against a call that keeps time on a manual clock: what the
 * application's server is asked, what is played, and how the call ends, as the caller presses
 * keys.
 */
/** A request the application made to its server. */
export interface AppRequest {
  at: number;
  /** fetch: its answer is wanted; notify: it is not (redirect="false"). */
  kind: 'fetch' | 'notify';
  method: string;
  url: string;
  params: Record<string, string>;
}

export interface Seen {
  requests: AppRequest[];
  /** What was played: `<ms> <kind>`. */
  played: string[];
  /** Digits sent into the call: `<ms> <digits>`. */
  sent: string[];
  ended: LegEnd | null;
  endedAt: number | null;
}

function fakeCall(documents: Record<string, string>, scheduler: ManualScheduler) {
  const seen: Seen = { requests: [], played: [], sent: [], ended: null, endedAt: null };
  let stopPlaying: (() => void) | null = null;
  const call: AppCall = {
    uuid: 'call-1',
    direction: 'outbound',
    get over() {
      return seen.ended !== null;
    },
    answered: true,
    requestParams: () => ({ CallUUID: 'call-1' }),
    fetch: async (url, method, params) => {
      seen.requests.push({ at: scheduler.now(), kind: 'fetch', method, url, params });
      const body = documents[url];
      return body === undefined
        ? { ok: false, error: 'not served' }
        : { ok: true, status: 200, body, contentType: 'text/xml' };
    },
    notify: (url, method, params) => {
      seen.requests.push({ at: scheduler.now(), kind: 'notify', method, url, params });
    },
    answer: () => {},
    earlyMedia: () => {},
    // Everything plays for one second unless stopped.
    play: (source) => {
      seen.played.push(`${scheduler.now()} ${source.kind}`);
      return new Promise<boolean>((resolve) => {
        const timer = scheduler.after(1000, () => resolve(true));
        stopPlaying = () => {
          timer.cancel();
          resolve(false);
        };
      });
    },
    stopPlayback: async () => stopPlaying?.(),
    // 250 ms a digit, 500 ms a w, 1 s a W, as a leg sends them.
    sendDigits: (digits) => {
      seen.sent.push(`${scheduler.now()} ${digits}`);
      const ms = [...digits].reduce((t, d) => t + (d === 'w' ? 500 : d === 'W' ? 1000 : 250), 0);
      return new Promise<boolean>((resolve) => scheduler.after(ms, () => resolve(true)));
    },
    waitForSilence: async () => true,
    waitForBeep: (maxMs) => new Promise((resolve) => scheduler.after(maxMs, () => resolve(false))),
    digits: new DigitCollector(scheduler),
    hangup: async (end) => {
      if (seen.ended !== null) return;
      seen.ended = end;
      seen.endedAt = scheduler.now();
      call.digits.close();
    },
    log: () => {},
  };
  return { call, seen };
}

/** Runs the application on `xml`, pressing `keys` (`[ms, digit]`) as the clock goes. */
export async function runApp(
  xml: string,
  keys: [number, string][],
  documents: Record<string, string> = {},
): Promise<Seen> {
  const scheduler = new ManualScheduler();
  const { call, seen } = fakeCall(documents, scheduler);
  let finished = false;
  const done = new AnswerApp(call, scheduler).run({ xml }).finally(() => (finished = true));
  const pending = [...keys];
  // Time runs until the application is done (a call that ended may still have a wait to
  // finish), at most a minute of it.
  for (let ms = 0; ms < 60_000 && !finished; ms += 50) {
    while (pending.length > 0 && pending[0]![0] <= ms) call.digits.press(pending.shift()![1]);
    await turn();
    scheduler.advance(50);
  }
  await done;
  return seen;
}
