import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  exampleEnv,
  gatewaySip,
  numberWithApplication,
  startExample,
  startServingExample,
  type ServingExample,
} from '../../support/example-process.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';

/**
 * The quickstart as a test: examples/echo-bot.ts answers a number with a bidirectional stream
 * to itself, and examples/call-in.ts calls the number over SIP/RTP through a real gateway.
 */
let gw: TestGateway;
let bot: ServingExample;
const NUMBER = '14155550123';

beforeAll(async () => {
  gw = await startGateway({ listen: true });
  bot = await startServingExample('echo-bot', /echo bot listening/);
  await numberWithApplication(gw, NUMBER, { answer_url: bot.url('/answer') });
});

afterAll(async () => {
  await bot?.stop();
  await gw?.close();
});

describe('examples/echo-bot.ts with examples/call-in.ts', () => {
  it("plays the caller's tone back and reports each checkpoint once it was played", async () => {
    const caller = startExample(
      'call-in',
      [NUMBER, '--gateway-sip', gatewaySip(gw), '--tone', '440', '--seconds', '5'],
      exampleEnv(gw),
    );
    expect(await caller.exited).toBe(0);
    const out = caller.output();
    expect(out).toContain('answered: sending RTP to');
    // Every full second heard back is the caller's own 440 Hz, echoed by the bot.
    const heard = caller.lines(/^heard /);
    expect(heard.length).toBeGreaterThanOrEqual(3);
    for (const line of heard.slice(1)) expect(line).toMatch(/: 440 Hz strongest, -\d/);
    await bot.waitFor(/stream closed after echoing \d+ frames/);
    expect(bot.output()).toMatch(
      /start: call [0-9a-f-]{36}, stream [0-9a-f-]{36}, audio\/x-l16 at 16000 Hz/,
    );
    expect(bot.output()).toContain('playedStream: checkpoint second-1 played out');
    await bot.waitFor(/call [0-9a-f-]{36} ended: Normal Hangup/);
  });

  it('sends clearAudio when the caller presses a key, and the gateway answers clearedAudio', async () => {
    const before = bot.lines(/clearedAudio/).length;
    const caller = startExample(
      'call-in',
      [
        NUMBER,
        '--gateway-sip',
        gatewaySip(gw),
        '--tone',
        '660',
        '--seconds',
        '4',
        '--dtmf',
        '7',
        '--dtmf-at',
        '2',
      ],
      exampleEnv(gw),
    );
    expect(await caller.exited).toBe(0);
    expect(caller.output()).toContain('pressing 7');
    expect(caller.lines(/: 660 Hz strongest/).length).toBeGreaterThanOrEqual(2);
    await bot.waitFor(/dtmf: the caller pressed 7; sending clearAudio/);
    await bot.waitFor(/clearedAudio: the queued audio was dropped/);
    expect(bot.lines(/clearedAudio:/).length).toBe(before + 1);
  });
});
