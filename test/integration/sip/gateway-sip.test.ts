import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SipResponse } from '../../../src/sip/message/index.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { RawUdpPeer } from '../../support/sip-client.js';

/** The SIP side of a running gateway: its answers, its health and its metrics. */
let gw: TestGateway;
let peer: RawUdpPeer;
let port: number;

beforeAll(async () => {
  gw = await startGateway({ listen: true });
  port = gw.gateway.sip.addresses.udp.port;
  peer = await RawUdpPeer.open();
});

afterAll(async () => {
  peer.close();
  await gw.close();
});

function invite(): string {
  const sdp =
    'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n';
  return [
    `INVITE sip:+15550100@127.0.0.1:${port} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${peer.port};branch=z9hG4bKgwinvite1;rport`,
    'Max-Forwards: 70',
    'From: <sip:caller@127.0.0.1>;tag=c1',
    'To: <sip:+15550100@127.0.0.1>',
    'Call-ID: gateway-invite-1',
    'CSeq: 1 INVITE',
    `Contact: <sip:caller@127.0.0.1:${peer.port}>`,
    'Content-Type: application/sdp',
    `Content-Length: ${sdp.length}`,
    '',
    sdp,
  ].join('\r\n');
}

describe('the gateway on SIP', () => {
  it('is healthy once SIP listens, on UDP and TCP on one port', async () => {
    expect((await gw.request('GET', '/health', { as: null })).status).toBe(200);
    const { udp, tcp } = gw.gateway.sip.addresses;
    expect(tcp.port).toBe(udp.port);
  });

  it('answers an INVITE for a number nobody holds with 100, then 404', async () => {
    peer.send(invite(), port);
    const [trying, final] = (await peer.waitFor(2)) as SipResponse[];
    expect([trying!.status, final!.status]).toEqual([100, 404]);
    expect(final!.to().tag).not.toBeNull();
  });

  it('counts SIP requests, responses and live transactions on /metrics', async () => {
    const metrics = (await gw.request('GET', '/metrics', { as: null })).text;
    expect(metrics).toContain('voxgate_sip_requests_total{direction="in",method="INVITE"} 1');
    expect(metrics).toContain(
      'voxgate_sip_responses_total{direction="out",method="INVITE",status="404"} 1',
    );
    expect(metrics).toMatch(/voxgate_sip_transactions\{side="server"\} \d+/);
    expect(metrics).toContain('voxgate_sip_retransmissions_total');
  });
});
