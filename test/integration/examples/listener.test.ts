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

/** examples/listener.ts hears a caller (examples/call-in.ts) through a real gateway. */
let gw: TestGateway;
let listener: ServingExample;
const NUMBER = '14155550125';

beforeAll(async () => {
  gw = await startGateway({ listen: true });
  listener = await startServingExample('listener', /listener listening/);
  await numberWithApplication(gw, NUMBER, { answer_url: listener.url('/answer') });
});

afterAll(async () => {
  await listener?.stop();
  await gw?.close();
});

describe('examples/listener.ts', () => {
  it("prints the caller's speech energy and every key pressed", async () => {
    const caller = startExample(
      'call-in',
      [
        ...[NUMBER, '--gateway-sip', gatewaySip(gw), '--say', 'Hello, this is a test call.'],
        ...['--dtmf', '42', '--dtmf-at', '2', '--seconds', '4'],
      ],
      exampleEnv(gw),
    );
    expect(await caller.exited).toBe(0);
    await listener.waitFor(/stop: the call or the stream ended/);
    expect(listener.output()).toMatch(/start: call [0-9a-f-]{36}, audio\/x-l16 at 8000 Hz/);
    // espeak-ng speech sent at about -20 dBFS: loud half seconds, read from the L16 samples.
    const energy = listener.lines(/energy \d+\.\d s: /);
    expect(energy.length).toBeGreaterThanOrEqual(5);
    const speech = energy.filter((line) => / speech /.test(line));
    expect(speech.length).toBeGreaterThanOrEqual(2);
    for (const line of speech) {
      const dbfs = Number(/: (-?\d+\.\d) dBFS/.exec(line)![1]);
      expect(dbfs).toBeGreaterThan(-40);
      expect(dbfs).toBeLessThan(-3);
    }
    expect(listener.lines(/^\S+ digit /).map((line) => line.split(' ').pop())).toEqual(['4', '2']);
  });
});
