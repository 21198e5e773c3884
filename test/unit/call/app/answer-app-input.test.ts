import { describe, expect, it } from 'vitest';
import { runApp } from '../../../support/app-run.js';

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
    expect(seen.requests.map((r) => [r.at, r.url, r.params.Digits])).toEqual([[5000, ACT, '12']]);
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
    expect(seen.requests[0]).toMatchObject({ url: ACT, params: { Digits: '5' } });
    expect(seen.requests[0]!.at).toBeLessThanOrEqual(1100);
  });
});
