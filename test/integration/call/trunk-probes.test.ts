import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { runSipp, startSippUas } from '../../support/sipp.js';
import { until } from '../../support/wait.js';

/**
 * OPTIONS probing of trunk origination URIs, once a second here: a host that leaves its
 * probes unanswered is skipped by trunk calls (its INVITE never goes), and is used again once
 * it answers.
 */
let gw: TestGateway;

/** A UDP socket that records what reaches it and, when `answering`, answers OPTIONS 200. */
interface ProbedHost {
  port: number;
  received: string[];
  answering: boolean;
  socket: Socket;
}

async function probedHost(): Promise<ProbedHost> {
  const socket = createSocket('udp4');
  const host: ProbedHost = { port: 0, received: [], answering: false, socket };
  socket.on('message', (data, from) => {
    const text = data.toString('latin1');
    host.received.push(text);
    if (!host.answering || !text.startsWith('OPTIONS ')) return;
    const head = text.split('\r\n\r\n')[0]!.split('\r\n');
    const keep = head.filter((line) => /^(Via|From|To|Call-ID|CSeq):/i.test(line));
    const reply = ['SIP/2.0 200 OK', ...keep, 'Content-Length: 0', '', ''].join('\r\n');
    socket.send(reply, from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  host.port = (socket.address() as AddressInfo).port;
  return host;
}

const hosts: ProbedHost[] = [];
beforeAll(async () => {
  gw = await startGateway({
    listen: true,
    env: { VOXGATE_TRUNK_PROBE_INTERVAL: '1', VOXGATE_TRUNK_RESPONSE_TIMEOUT: '3' },
  });
});
afterAll(async () => {
  await gw.close();
  for (const host of hosts) host.socket.close();
});

const account = () => `/v1/Account/${gw.main.id}`;
async function uri(text: string): Promise<string> {
  return (await gw.request('POST', `${account()}/SipTrunk/URI/`, { json: { uri: text } })).body
    .uri_uuid;
}
async function trunkNumber(number: string, primary: string, fallback: string) {
  const trunk = await gw.request('POST', `${account()}/SipTrunk/Trunk/`, {
    json: { trunk_direction: 'inbound', primary_uri_uuid: primary, fallback_uri_uuid: fallback },
  });
  await gw.request('POST', `${account()}/Number/`, {
    json: { numbers: number, carrier: 'c', region: 'r', trunk_id: trunk.body.trunk_id },
  });
}
const call = (number: string) =>
  runSipp({
    scenario: 'uac-invite.xml',
    target: { host: '127.0.0.1', port: gw.gateway.sip.addresses.udp.port },
    calls: 1,
    extraArgs: ['-s', number, '-d', '500'],
    traceMessages: true,
    timeoutMs: 20_000,
  });
const downLogged = (uuid: string) =>
  gw.logs.some((line) => line.includes('origination URI is down') && line.includes(uuid));

it('skips a primary that leaves its probes unanswered, and uses it again once it answers', async () => {
  const silent = await probedHost();
  hosts.push(silent);
  const fallback = await startSippUas({ scenario: 'pbx-probed.xml', traceMessages: true });
  try {
    const primary = await uri(`127.0.0.1:${silent.port}`);
    await trunkNumber('14155550300', primary, await uri(`127.0.0.1:${fallback.port}`));
    await until(() => downLogged(primary), 8000);
    expect(silent.received.every((m) => m.startsWith('OPTIONS '))).toBe(true);

    expect((await call('14155550300')).successful).toBe(1);
    // The call went straight to the fallback: the primary never saw an INVITE.
    expect(silent.received.some((m) => m.startsWith('INVITE '))).toBe(false);
    const seen = await fallback.stop();
    expect(seen.messages).toMatch(/^INVITE sip:14155550300@/m);
    expect(seen.messages).toMatch(/^OPTIONS sip:127\.0\.0\.1:\d+ SIP\/2\.0/m);

    silent.answering = true;
    await until(
      () => gw.logs.some((l) => l.includes('origination URI answers again') && l.includes(primary)),
      8000,
    );
  } finally {
    await fallback.stop();
  }
});

it('fails a call at once with 503 and 2010 when both URIs are down', async () => {
  const [a, b] = [await probedHost(), await probedHost()];
  hosts.push(a, b);
  const primary = await uri(`127.0.0.1:${a.port}`);
  const fallback = await uri(`127.0.0.1:${b.port}`);
  await trunkNumber('14155550301', primary, fallback);
  await until(() => downLogged(primary) && downLogged(fallback), 8000);
  const result = await call('14155550301');
  expect(result.messages).toMatch(/^SIP\/2\.0 503 /m);
  expect([...a.received, ...b.received].some((m) => m.startsWith('INVITE '))).toBe(false);
  await until(async () =>
    (await gw.gateway.state.calls.all(gw.main.id)).some((r) => r.to_number === '14155550301'),
  );
  const record = (await gw.gateway.state.calls.all(gw.main.id)).find(
    (r) => r.to_number === '14155550301',
  );
  expect(record).toMatchObject({ hangup_cause_code: 2010 });
  const failed = gw.logs.find((l) => l.includes('trunk call failed'))!;
  expect(failed).toContain(`primary 127.0.0.1:${a.port} is down`);
  expect(failed).toContain(`fallback 127.0.0.1:${b.port} is down`);
});
