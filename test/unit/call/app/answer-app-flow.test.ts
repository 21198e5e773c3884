import { describe, expect, it } from 'vitest';
import { runApp } from '../../../support/app-run.js';

/** The answer-XML elements as they run, on a manual clock (see runApp). */
const ACT = 'http://app.example.com/act';
const NEXT = 'http://app.example.com/next';
const HANGUP = '<Response><Hangup/></Response>';

describe('GetDigits', () => {
  it('asks again up to retries times, and a valid answer goes to the action', async () => {
    const seen = await runApp(
      `<Response><GetDigits action="${ACT}" numDigits="1" validDigits="12" retries="3" timeout="2"><Speak>Press one or two.</Speak></GetDigits></Response>`,
      // 9 cuts the prompt short and is refused: the prompt is played again, and 2 is taken.
      [
        [500, '9'],
        [2000, '2'],
      ],
      { [ACT]: HANGUP },
    );
    expect(seen.played.map((p) => p.split(' ')[1])).toEqual(['speech', 'speech']);
    expect(seen.requests).toMatchObject([{ url: ACT, method: 'POST', params: { Digits: '2' } }]);
  });

  it('goes on to the next element after its retries with no valid answer, without the action', async () => {
    const seen = await runApp(
      `<Response><GetDigits action="${ACT}" numDigits="1" retries="2" timeout="1"/><Speak>Goodbye.</Speak></Response>`,
      [],
    );
    expect(seen.requests).toEqual([]);
    expect(seen.played).toEqual(['2000 speech']);
  });

  it('with redirect="false" tells the action, by its method, and goes on', async () => {
    const seen = await runApp(
      `<Response><GetDigits action="${ACT}" method="GET" numDigits="2" redirect="false"/><Speak>Thanks.</Speak></Response>`,
      [
        [300, '4'],
        [600, '2'],
      ],
    );
    expect(seen.requests).toMatchObject([
      { kind: 'notify', method: 'GET', url: ACT, params: { Digits: '42', CallUUID: 'call-1' } },
    ]);
    expect(seen.played).toHaveLength(1);
    expect(seen.ended?.cause.name).toBe('End Of XML Instructions');
  });
});

describe('Hangup, Redirect and DTMF', () => {
  it('Hangup schedule ends the call that many seconds on, while the next elements run', async () => {
    const seen = await runApp(
      '<Response><Hangup schedule="3"/><Wait length="10"/><Speak>Never heard.</Speak></Response>',
      [],
    );
    expect(seen.ended).toMatchObject({
      cause: { code: 6000, name: 'Scheduled Hangup' },
      source: 'Answer XML',
    });
    expect(seen.endedAt).toBe(3000);
    expect(seen.played).toEqual([]);
  });

  it('Redirect fetches its URL by its method, and that document replaces the rest', async () => {
    const seen = await runApp(
      `<Response><Redirect method="GET">${NEXT}</Redirect><Speak>Never heard.</Speak></Response>`,
      [],
      { [NEXT]: HANGUP },
    );
    expect(seen.requests).toMatchObject([
      { kind: 'fetch', method: 'GET', url: NEXT, params: { CallUUID: 'call-1' } },
    ]);
    expect(seen.played).toEqual([]);
    expect(seen.ended?.cause.name).toBe('Normal Hangup');
  });

  it('DTMF with async="false" holds the next element until its digits are sent', async () => {
    const seen = await runApp(
      '<Response><DTMF async="false">12w3</DTMF><Speak>After the digits.</Speak></Response>',
      [],
    );
    expect(seen.sent).toEqual(['0 12w3']);
    // The fake call takes 250 ms per digit and 500 ms per w: the Speak starts at 1250 ms.
    expect(seen.played).toEqual(['1250 speech']);
  });
});
