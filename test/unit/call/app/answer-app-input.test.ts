import { setImmediate as turn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { AnswerApp } from '../../../../src/call/app/answer-app.js';
import type { AppCall } from '../../../../src/call/app/app-call.js';
import { DigitCollector } from '../../../../src/call/app/digit-collector.js';
import type { LegEnd } from '../../../../src/call/legs/leg-end.js';
import { ManualScheduler } from '../../../../src/core/scheduler.js';

/**
 * GetInput and GetDigits against a call that keeps time on a manual clock: what the
 * application's server is asked, and when, as the caller presses keys.
 */
interface Seen {
  /** Requests to the application: `<ms> <url> <Digits or ->`. */
  requests: string[];
  /** What was played: `<ms> <kind>`. */
  played: string[];
  ended: LegEnd | null;
}

function fakeCall(documents: Record<string, string>, scheduler: ManualScheduler) {
  const seen: Seen = { requests: [], played: [], ended: null };
  let stopPlaying: (() => void) | null = null;
  const call: AppCall = {
    uuid: 'call-1',
    direction: 'outbound',
    get over() {
      return seen.ended !== null;
    },
    answered: true,
    requestParams: () => ({ CallUUID: 'call-1' }),
    fetch: async (url, _method, params) => {
      seen.requests.push(`${scheduler.now()} ${url} ${params.Digits ?? '-'}`);
      const body = documents[url];
      return body === undefined
        ? { ok: false, error: 'not served' }
        : { ok: true, status: 200, body, contentType: 'text/xml' };
    },
    notify: (url, _method, params) => {
      seen.requests.push(`${scheduler.now()} ${url} ${params.Digits ?? '-'}`);
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
    sendDigits: async () => true,
    waitForSilence: async () => true,
    waitForBeep: (maxMs) => new Promise((resolve) => scheduler.after(maxMs, () => resolve(false))),
    digits: new DigitCollector(scheduler),
    hangup: async (end) => {
      seen.ended = end;
      call.digits.close();
    },
    log: () => {},
  };
  return { call, seen };
}

/** Runs the application on `xml`, pressing `keys` (`[ms, digit]`) as the clock goes. */
async function runApp(
  xml: string,
  keys: [number, string][],
  documents: Record<string, string> = {},
): Promise<Seen> {
  const scheduler = new ManualScheduler();
  const { call, seen } = fakeCall(documents, scheduler);
  const done = new AnswerApp(call, scheduler).run({ xml });
  const pending = [...keys];
  for (let ms = 0; ms < 60_000 && seen.ended === null; ms += 50) {
    while (pending.length > 0 && pending[0]![0] <= ms) call.digits.press(pending.shift()![1]);
    await turn();
    scheduler.advance(50);
  }
  await done;
  return seen;
}

const ACT = 'http://app.example.com/act';

describe('GetInput with inputType dtmf', () => {
  it('goes on to the next element, without calling its action, when nothing is pressed', async () => {
    const seen = await runApp(
      `<Response><GetInput action="${ACT}" inputType="dtmf" executionTimeout="5"/><Speak>Goodbye.</Speak></Response>`,
      [],
    );
    expect(seen.requests).toEqual([]);
    expect(seen.played).toEqual(['5000 speech']);
    expect(seen.ended?.cause.name).toBe('End Of XML Instructions');
  });

  it('ends the input executionTimeout seconds after it starts, however the keys keep coming', async () => {
    const seen = await runApp(
      `<Response><GetInput action="${ACT}" inputType="dtmf" executionTimeout="5" digitEndTimeout="3" finishOnKey="none"/></Response>`,
      [
        [2000, '1'],
        [4000, '2'],
        [6000, '3'],
        [8000, '4'],
      ],
      { [ACT]: '<Response><Hangup/></Response>' },
    );
    expect(seen.requests).toEqual([`5000 ${ACT} 12`]);
  });
});

describe('a key pressed during GetDigits', () => {
  it('ends a Wait among its prompts at once', async () => {
    const seen = await runApp(
      `<Response><GetDigits action="${ACT}" numDigits="1"><Wait length="20"/></GetDigits></Response>`,
      [[1000, '5']],
      { [ACT]: '<Response><Hangup/></Response>' },
    );
    expect(seen.requests).toHaveLength(1);
    const [at, url, digits] = seen.requests[0]!.split(' ');
    expect([url, digits]).toEqual([ACT, '5']);
    expect(Number(at)).toBeLessThanOrEqual(1100);
  });
});
