import { describe, expect, it } from 'vitest';
import { ManualScheduler } from '../../../../src/core/scheduler.js';
import { generateDtlsCertificate } from '../../../../src/media/dtls/dtls-certificate.js';
import { DtlsContext } from '../../../../src/media/dtls/dtls-context.js';
import { DtlsEndpoint } from '../../../../src/media/dtls/dtls-endpoint.js';
import type { SrtpKeys } from '../../../../src/media/dtls/srtp-keys.js';
import { serializeRtcpCompound } from '../../../../src/media/rtp/rtcp-packet.js';
import { serializeRtpPacket } from '../../../../src/media/rtp/rtp-packet.js';
import { SrtpContext } from '../../../../src/media/srtp/srtp-context.js';
import { createIceCredentials } from '../../../../src/media/webrtc/ice/index.js';
import { bindingRequest, parseStunMessage } from '../../../../src/media/webrtc/stun/index.js';
import {
  WebrtcTransport,
  type WebrtcFailure,
} from '../../../../src/media/webrtc/webrtc-transport.js';

const OURS = generateDtlsCertificate('gateway');
const THEIRS = generateDtlsCertificate('browser');
const BROWSER = { address: '192.0.2.7', port: 50000 };
const local = createIceCredentials();
const remote = createIceCredentials();
const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * The transport with a browser-like peer in memory: the peer's DTLS client is fed what the
 * transport sends to the selected address, and feeds the transport in turn, a turn apart.
 */
function setUp(scheduler = new ManualScheduler(Date.now())) {
  const failures: WebrtcFailure[] = [];
  const tally = { srtp: [] as string[], ice: [] as string[] };
  const sent: { datagram: Buffer; to: { address: string; port: number } }[] = [];
  const heard = { rtp: [] as Buffer[], rtcp: [] as Buffer[] };
  const transport = new WebrtcTransport({
    spec: { localIce: local },
    environment: {
      context: () => new DtlsContext(OURS),
      tally: { srtp: (r) => tally.srtp.push(r), ice: (r) => tally.ice.push(r) },
    },
    scheduler,
    onFailed: (failure) => failures.push(failure),
  });
  let peerKeys: SrtpKeys | null = null;
  const peer = new DtlsEndpoint({
    context: new DtlsContext(THEIRS),
    role: 'client',
    remoteFingerprints: [OURS.sdpFingerprint],
    listener: {
      send: (datagram) => void turn().then(() => transport.receive(datagram, BROWSER)),
      onConnected: (keys) => (peerKeys = keys),
    },
  });
  transport.attach({
    send: (datagram, to) => {
      sent.push({ datagram, to });
      if (datagram[0]! >= 20 && datagram[0]! <= 63) void turn().then(() => peer.feed(datagram));
    },
    rtp: (packet) => heard.rtp.push(Buffer.from(packet)),
    rtcp: (packet) => heard.rtcp.push(Buffer.from(packet)),
  });
  const check = (key = local.pwd) =>
    transport.receive(
      bindingRequest({
        username: `${local.ufrag}:${remote.ufrag}`,
        key: Buffer.from(key),
        priority: 1,
        useCandidate: true,
        role: 'controlling',
        tieBreaker: 1n,
      }),
      BROWSER,
    );
  return { transport, peer, failures, tally, sent, heard, check, scheduler, keys: () => peerKeys };
}

function peerContext(keys: SrtpKeys): SrtpContext {
  return new SrtpContext({
    suite: 'AEAD_AES_128_GCM',
    masterKey: keys.localMasterKey,
    masterSalt: keys.localMasterSalt,
    direction: 'outbound',
  });
}

const rtp = (sequenceNumber: number) =>
  serializeRtpPacket({
    marker: false,
    payloadType: 111,
    sequenceNumber,
    timestamp: sequenceNumber * 960,
    ssrc: 0xabc,
    payload: Buffer.from([1, 2, 3, 4]),
  });

describe('a WebRTC leg transport', () => {
  it('holds a ClientHello that comes before the role, connects once the answer gives it, and lets only authentic SRTP through', async () => {
    const { transport, peer, tally, sent, heard, check, keys } = setUp();
    check();
    expect(parseStunMessage(sent[0]!.datagram).messageClass).toBe('success');
    expect(sent[0]!.to).toEqual(BROWSER);
    peer.start();
    for (let i = 0; i < 5; i++) await turn();
    expect(transport.stats.dtls).toBe('waiting');
    transport.setPeer({
      remoteUfrag: remote.ufrag,
      remoteFingerprints: [THEIRS.sdpFingerprint],
      role: 'server',
    });
    for (let i = 0; i < 20 && keys() === null; i++) await turn();
    expect(transport.destination).toEqual(BROWSER);
    const srtp = peerContext(keys()!);

    transport.receive(srtp.protectRtp(rtp(1)), BROWSER);
    const forged = srtp.protectRtp(rtp(2));
    forged[forged.length - 1]! ^= 1;
    transport.receive(forged, BROWSER);
    transport.receive(srtp.protectRtp(rtp(3)), { address: '192.0.2.8', port: 50000 });
    const report = serializeRtcpCompound([{ type: 'rr', ssrc: 0xabc, reports: [] }]);
    transport.receive(srtp.protectRtcp(report), BROWSER);
    transport.receive(Buffer.from([70, 0, 0, 0]), BROWSER);

    expect(heard.rtp).toEqual([rtp(1)]);
    expect(heard.rtcp).toEqual([report]);
    expect(tally.srtp).toEqual(['auth']);
    expect(transport.stats).toMatchObject({
      ice: 'connected',
      dtls: 'connected',
      srtpDropped: { auth: 1, replay: 0, malformed: 0 },
      unexpected: 2,
    });
    check('a-password-that-is-not-ours-at-all');
    expect(tally.ice).toEqual(['bad-integrity']);
  });

  it('sends nothing and reports consent lost once, 30 s after the last valid check', async () => {
    const { transport, peer, failures, check, scheduler } = setUp();
    transport.setPeer({ remoteFingerprints: [THEIRS.sdpFingerprint], role: 'server' });
    check();
    peer.start();
    for (let i = 0; i < 20 && transport.destination === undefined; i++) await turn();
    expect(transport.destination).toEqual(BROWSER);
    scheduler.advance(29_999);
    expect(failures).toEqual([]);
    scheduler.advance(1);
    expect(failures).toEqual([
      { kind: 'consent-lost', message: 'ICE consent lost: no valid check for 30000 ms (RFC 7675)' },
    ]);
    expect(transport.destination).toBeUndefined();
    scheduler.advance(60_000);
    expect(failures).toHaveLength(1);
  });

  it('is refused in a worker without the certificate, and with credentials that are not ICE ones', () => {
    const options = { scheduler: new ManualScheduler(), onFailed: () => undefined };
    expect(
      () => new WebrtcTransport({ ...options, spec: { localIce: local }, environment: undefined }),
    ).toThrow('this media worker has no DTLS certificate for WebRTC legs');
    const environment = { context: () => new DtlsContext(OURS) };
    expect(
      () =>
        new WebrtcTransport({
          ...options,
          spec: { localIce: { ufrag: 'a:b', pwd: local.pwd } },
          environment,
        }),
    ).toThrow('Expected 4 to 256 ice-chars for the local ufrag but received "a:b"');
  });
});
