import { describe, expect, it } from 'vitest';
import type { Flow } from '../../../../src/sip/transport/flow.js';
import {
  receivedParams,
  responseDestination,
} from '../../../../src/sip/transport/response-destination.js';

const via = (
  host: string,
  port: number | null,
  params: [string, string | null][] = [],
  transport = 'UDP',
) => ({
  transport,
  host,
  port,
  params: new Map(params),
});
const udpFlow: Flow = {
  protocol: 'UDP',
  local: { address: '192.0.2.1', port: 5060 },
  remote: { address: '198.51.100.7', port: 40000 },
};

describe('responseDestination (RFC 3261 18.2.2, RFC 3581 4)', () => {
  it('answers a reliable request on its connection, with received and sent-by port as fallback', () => {
    const flow: Flow = { ...udpFlow, protocol: 'TCP', connectionId: 'tcp-1' };
    expect(
      responseDestination(via('pc.example.com', 5070, [['received', '198.51.100.7']], 'TCP'), flow),
    ).toEqual({
      kind: 'connection',
      connectionId: 'tcp-1',
      fallback: { address: '198.51.100.7', port: 5070 },
    });
  });

  it('sends to received and rport when rport was stamped', () => {
    const v = via('10.0.0.5', 5060, [
      ['received', '198.51.100.7'],
      ['rport', '40000'],
    ]);
    expect(responseDestination(v, udpFlow)).toEqual({
      kind: 'address',
      address: { address: '198.51.100.7', port: 40000 },
    });
  });

  it('sends to received with the sent-by port, or 5060 when sent-by has none', () => {
    expect(
      responseDestination(via('pc.example.com', 5080, [['received', '198.51.100.7']]), udpFlow),
    ).toEqual({
      kind: 'address',
      address: { address: '198.51.100.7', port: 5080 },
    });
    expect(
      responseDestination(via('pc.example.com', null, [['received', '198.51.100.7']]), udpFlow),
    ).toEqual({
      kind: 'address',
      address: { address: '198.51.100.7', port: 5060 },
    });
  });

  it('sends to sent-by when the host was the source already, with 5061 as the TLS default', () => {
    expect(responseDestination(via('198.51.100.7', 5062), udpFlow)).toEqual({
      kind: 'address',
      address: { address: '198.51.100.7', port: 5062 },
    });
    expect(responseDestination(via('198.51.100.7', null, [], 'TLS'), udpFlow).kind).toBe('address');
    expect(responseDestination(via('198.51.100.7', null, [], 'TLS'), udpFlow)).toMatchObject({
      address: { port: 5061 },
    });
  });
});

describe('receivedParams (RFC 3261 18.2.1, RFC 3581 4)', () => {
  const source = { address: '198.51.100.7', port: 40000 };
  it('adds received when sent-by differs from the source', () => {
    expect(receivedParams(via('pc.example.com', 5060), source)).toEqual(
      new Map([['received', '198.51.100.7']]),
    );
    expect(receivedParams(via('198.51.100.7', 5060), source)).toEqual(new Map());
  });
  it('fills an empty rport with the source port, and always adds received with rport', () => {
    expect(receivedParams(via('198.51.100.7', 5060, [['rport', null]]), source)).toEqual(
      new Map([
        ['received', '198.51.100.7'],
        ['rport', '40000'],
      ]),
    );
  });
  it('compares IPv6 references without their brackets', () => {
    expect(
      receivedParams(via('[2001:db8::9]', 5060), { address: '2001:db8::9', port: 5060 }),
    ).toEqual(new Map());
  });
});
