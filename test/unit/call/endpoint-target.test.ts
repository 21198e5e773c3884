import { describe, expect, it } from 'vitest';
import { resolveSipTarget } from '../../../src/call/endpoint-target.js';
import { ManualScheduler } from '../../../src/core/scheduler.js';
import { EmbeddedStore } from '../../../src/state/embedded-store.js';
import type { BindingRecord } from '../../../src/state/records.js';
import { createState } from '../../../src/state/state.js';

/**
 * Where a call to `sip:<user>@<our host>` goes: an access token's subject registered over
 * WebSocket (a browser) is reached for calls of the account whose token registered it, and
 * for no other account or subaccount.
 */
const TENANT = 'MA' + 'T'.repeat(18);
const SUB = 'SA' + 'S'.repeat(18);
const domains = ['gw.example.com'];
const node = 'node-a';

const binding = (expiresAt: number): BindingRecord => ({
  contact: '<sip:k3j2@df7jal23ls0d.invalid;transport=ws>',
  expires_at: expiresAt,
  call_id: 'reg-1',
  cseq: 2,
  user_agent: 'SIP.js/0.21.2',
  protocol: 'WS',
  address: '198.51.100.7',
  port: 50544,
  connection_id: 'ws-17',
  node: 'node-a',
});

async function setUp(stored: BindingRecord[] | null = null) {
  const state = createState(new EmbeddedStore(null));
  const scheduler = new ManualScheduler();
  await state.registrations.create({
    account: TENANT,
    subaccount: SUB,
    created: 0,
    aor: `token:${SUB}:agent-7`,
    bindings: stored ?? [binding(scheduler.now() + 60_000)],
  });
  return { state, scheduler };
}

describe('a SIP URI naming an access token subject', () => {
  it('reaches the browser that registered with a token of the calling subaccount', async () => {
    const { state, scheduler } = await setUp();
    const owner = { account: TENANT, subaccount: SUB };
    const target = await resolveSipTarget('sip:agent-7@gw.example.com', {
      state,
      scheduler,
      domains,
      node,
      owner,
    });
    expect(target).toEqual({
      kind: 'uri',
      target: 'sip:k3j2@df7jal23ls0d.invalid;transport=ws',
      webrtc: true,
      destination: {
        protocol: 'WS',
        address: { address: '198.51.100.7', port: 50544 },
        connectionId: 'ws-17',
      },
    });
  });

  it('is dialled as written for the main account, another subaccount, or after expiry', async () => {
    const { state, scheduler } = await setUp();
    const uri = 'sip:agent-7@gw.example.com';
    const asWritten = { kind: 'uri', target: uri };
    for (const owner of [
      { account: TENANT, subaccount: null },
      { account: TENANT, subaccount: 'SA' + 'X'.repeat(18) },
      { account: 'MA' + 'O'.repeat(18), subaccount: SUB },
    ]) {
      expect(await resolveSipTarget(uri, { state, scheduler, domains, node, owner })).toEqual(
        asWritten,
      );
    }
    expect(await resolveSipTarget(uri, { state, scheduler, domains, node })).toEqual(asWritten);
    scheduler.advance(60_001);
    const owner = { account: TENANT, subaccount: SUB };
    expect(await resolveSipTarget(uri, { state, scheduler, domains, node, owner })).toEqual(
      asWritten,
    );
  });

  it('is not reached from a node other than the one that holds its connection', async () => {
    const { state, scheduler } = await setUp();
    const owner = { account: TENANT, subaccount: SUB };
    const uri = 'sip:agent-7@gw.example.com';
    expect(
      await resolveSipTarget(uri, { state, scheduler, domains, node: 'node-b', owner }),
    ).toEqual({ kind: 'elsewhere', node: 'node-a', protocol: 'WS' });
  });

  it('is reached from any node through the proxy of its Path', async () => {
    const scheduler = new ManualScheduler();
    const viaProxy = {
      ...binding(scheduler.now() + 60_000),
      path: ['<sip:lb.example.com;lr>'],
    };
    const { state } = await setUp([viaProxy]);
    const owner = { account: TENANT, subaccount: SUB };
    const target = await resolveSipTarget('sip:agent-7@gw.example.com', {
      state,
      scheduler,
      domains,
      node: 'node-b',
      owner,
    });
    expect(target).toMatchObject({ kind: 'uri', routeSet: ['<sip:lb.example.com;lr>'] });
  });
});

describe('a user registered from a browser and a phone', () => {
  it('rings the kind of the registration that lasts longest, and gives the other kind apart', async () => {
    const scheduler = new ManualScheduler();
    const phone = (port: number, expiresIn: number): BindingRecord => ({
      ...binding(scheduler.now() + expiresIn),
      contact: `<sip:agent-7@198.51.100.9:${port}>`,
      user_agent: 'baresip',
      protocol: 'UDP',
      address: '198.51.100.9',
      port,
      connection_id: null,
    });
    // Oldest expiry first, as the registrar keeps them: a phone, the browser, another phone.
    const { state } = await setUp([
      phone(5070, 30_000),
      binding(scheduler.now() + 45_000),
      phone(5060, 60_000),
    ]);
    const owner = { account: TENANT, subaccount: SUB };
    const target = await resolveSipTarget('sip:agent-7@gw.example.com', {
      state,
      scheduler,
      domains,
      node,
      owner,
    });
    const reachPhone = (port: number) => ({
      target: `sip:agent-7@198.51.100.9:${port}`,
      destination: { protocol: 'UDP', address: { address: '198.51.100.9', port } },
    });
    expect(target).toEqual({
      kind: 'uri',
      ...reachPhone(5060),
      others: [reachPhone(5070)],
      otherKind: [
        {
          target: 'sip:k3j2@df7jal23ls0d.invalid;transport=ws',
          destination: {
            protocol: 'WS',
            address: { address: '198.51.100.7', port: 50544 },
            connectionId: 'ws-17',
          },
        },
      ],
    });
  });
});

describe('the hosts that name this gateway', () => {
  const owner = { account: TENANT, subaccount: SUB };
  // UDP on one address, WebSocket on every address of the machine (loopback among them).
  const listening = { addresses: ['192.0.2.2', '0.0.0.0'], ports: [5060, 5066] };

  it('reach the user at an address SIP listens on, with no port or its own, and not another port', async () => {
    const { state, scheduler } = await setUp();
    const context = { state, scheduler, domains, listening, node, owner };
    for (const uri of [
      'sip:agent-7@192.0.2.2',
      'sip:agent-7@127.0.0.1:5060',
      'sip:agent-7@[::1]:5066',
    ]) {
      expect(await resolveSipTarget(uri, context)).toMatchObject({
        kind: 'uri',
        target: 'sip:k3j2@df7jal23ls0d.invalid;transport=ws',
      });
    }
    // Another SIP server of this machine, and another machine, are dialled as written.
    for (const uri of ['sip:agent-7@127.0.0.1:5080', 'sip:agent-7@192.0.2.9']) {
      expect(await resolveSipTarget(uri, context)).toEqual({ kind: 'uri', target: uri });
    }
  });
});
