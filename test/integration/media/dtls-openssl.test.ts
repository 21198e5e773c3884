import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  dtlsCertificateFromPem,
  generateDtlsCertificate,
} from '../../../src/media/dtls/dtls-certificate.js';
import { DtlsContext } from '../../../src/media/dtls/dtls-context.js';
import {
  DtlsEndpoint,
  type DtlsEndpointOptions,
  type DtlsFailure,
} from '../../../src/media/dtls/dtls-endpoint.js';
import type { DtlsRole, SrtpKeys, SrtpProfile } from '../../../src/media/dtls/srtp-keys.js';
import {
  DtlsUdpRelay,
  startOpenSslDtlsClient,
  startOpenSslDtlsServer,
  type OpenSslDtlsPeer,
} from '../../support/openssl-dtls-peer.js';
import { makeTestCertificate, type TestCertificate } from '../../support/tls-certificate.js';
import { until } from '../../support/wait.js';

/**
 * Our DTLS-SRTP endpoint against OpenSSL's command-line peers over real UDP on loopback: the
 * keying material both export must be the same bytes, in RFC 5764 4.2's order.
 */
const ours = generateDtlsCertificate();
let peerCertificate: TestCertificate;
let peerFingerprint: string;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  peerCertificate = await makeTestCertificate();
  peerFingerprint = dtlsCertificateFromPem(
    peerCertificate.cert.toString(),
    peerCertificate.key.toString(),
  ).sdpFingerprint;
});
afterAll(() => peerCertificate.remove());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Events {
  connected: SrtpKeys[];
  failed: DtlsFailure[];
  closed: string[];
}

function endpointOn(
  relay: DtlsUdpRelay,
  role: DtlsRole,
  options: Partial<DtlsEndpointOptions> = {},
): { endpoint: DtlsEndpoint; events: Events } {
  const events: Events = { connected: [], failed: [], closed: [] };
  const endpoint = new DtlsEndpoint({
    context: new DtlsContext(ours),
    role,
    remoteFingerprints: [peerFingerprint],
    listener: {
      send: relay.send,
      onConnected: (keys) => events.connected.push(keys),
      onFailed: (failure) => events.failed.push(failure),
      onClosed: (reason) => events.closed.push(reason),
    },
    ...options,
  });
  relay.endpoint = endpoint;
  cleanups.push(async () => {
    endpoint.close();
    await relay.close();
  });
  return { endpoint, events };
}

function opensslOptions(profiles: string, length: number) {
  return {
    certPath: peerCertificate.certPath,
    keyPath: peerCertificate.keyPath,
    srtpProfiles: profiles,
    keyingMaterialLength: length,
  };
}

async function serverPeer(profiles: string, length: number): Promise<OpenSslDtlsPeer> {
  const peer = await startOpenSslDtlsServer(opensslOptions(profiles, length));
  cleanups.push(() => peer.stop());
  return peer;
}

/** RFC 5764 4.2: client key, server key, client salt, server salt, as the exporter gives them. */
function exportedOrder(keys: SrtpKeys, role: DtlsRole): string {
  const [client, server] =
    role === 'client'
      ? [
          [keys.localMasterKey, keys.localMasterSalt],
          [keys.remoteMasterKey, keys.remoteMasterSalt],
        ]
      : [
          [keys.remoteMasterKey, keys.remoteMasterSalt],
          [keys.localMasterKey, keys.localMasterSalt],
        ];
  return Buffer.concat([client[0]!, server[0]!, client[1]!, server[1]!])
    .toString('hex')
    .toUpperCase();
}

describe('DTLS-SRTP against openssl s_server (we are the client, a=setup:active)', () => {
  const cases: [SrtpProfile, number][] = [
    ['SRTP_AES128_CM_SHA1_80', 60],
    ['SRTP_AEAD_AES_128_GCM', 56],
  ];
  for (const [profile, length] of cases) {
    it(`exports the same ${length} bytes as s_server with ${profile}`, async () => {
      const peer = await serverPeer(profile, length);
      const relay = new DtlsUdpRelay();
      await relay.bind(peer.port);
      const { endpoint, events } = endpointOn(relay, 'client');
      endpoint.start();
      await until(() => events.connected.length > 0 && peer.keyingMaterial() !== undefined, 5000);
      const keys = events.connected[0]!;
      expect(keys.profile).toBe(profile);
      expect(peer.srtpProfile()).toBe(profile);
      expect(exportedOrder(keys, 'client')).toBe(peer.keyingMaterial());
      expect(events.failed).toEqual([]);
      // s_server asks for a client certificate and was given ours.
      expect(peer.output()).toMatch(/CN ?= ?voxgate/);
    });
  }

  it('fails with a clear error when the certificate does not match the fingerprint, and s_server hears bad_certificate', async () => {
    const peer = await serverPeer('SRTP_AES128_CM_SHA1_80', 60);
    const relay = new DtlsUdpRelay();
    await relay.bind(peer.port);
    const { endpoint, events } = endpointOn(relay, 'client', {
      remoteFingerprints: [generateDtlsCertificate().sdpFingerprint],
    });
    endpoint.start();
    await until(() => events.failed.length > 0, 5000);
    expect(events.failed).toHaveLength(1);
    expect(events.failed[0]!.kind).toBe('error');
    expect(events.failed[0]!.reason).toMatch(
      /^the peer's certificate does not match its SDP fingerprint \(its SHA256 is [0-9A-F:]{95}\) \(sent a fatal alert bad certificate\)$/,
    );
    await until(() => /alert bad certificate|alert number 42/.test(peer.output()), 5000);
    expect(events.connected).toEqual([]);
    expect(peer.keyingMaterial()).toBeUndefined();
  });

  it('times out when s_server goes silent after its first flight, having retransmitted ours', async () => {
    const peer = await serverPeer('SRTP_AES128_CM_SHA1_80', 60);
    const relay = new DtlsUdpRelay();
    await relay.bind(peer.port);
    // Two ClientHellos (the second with s_server's cookie) get through; from then on the peer
    // hears nothing of ours and we nothing of it.
    let silent = false;
    relay.passOutgoing = (_d, index) => {
      if (index >= 2) silent = true;
      return !silent;
    };
    relay.passIncoming = () => !silent;
    const { endpoint, events } = endpointOn(relay, 'client', {
      handshakeTimeoutMs: 1500,
      initialRetransmitMs: 300,
    });
    endpoint.start();
    await until(() => events.failed.length > 0, 4000);
    // Our last flight (one datagram) at about 0 ms, again at 300 and 900; the next would be at
    // 2100.
    expect(endpoint.counters.retransmitted).toBe(2);
    expect(events.failed).toEqual([
      {
        kind: 'timeout',
        reason: expect.stringMatching(
          /^the DTLS handshake did not complete within 1500 ms \(\d+ datagrams received, 2 retransmitted\)$/,
        ),
      },
    ]);
    expect(endpoint.state).toBe('failed');
  });
});

describe('DTLS-SRTP against openssl s_client (we are the server, a=setup:passive)', () => {
  async function clientPeer(relayPort: number): Promise<OpenSslDtlsPeer> {
    const peer = startOpenSslDtlsClient(
      relayPort,
      opensslOptions('SRTP_AES128_CM_SHA1_32:SRTP_AES128_CM_SHA1_80', 60),
    );
    cleanups.push(() => peer.stop());
    return peer;
  }

  it('exports the same keying material as s_client, picks our preferred profile of its offer, and reports its close_notify', async () => {
    const relay = new DtlsUdpRelay();
    const port = await relay.bind();
    const { endpoint, events } = endpointOn(relay, 'server');
    endpoint.start();
    const peer = await clientPeer(port);
    await until(() => events.connected.length > 0 && peer.keyingMaterial() !== undefined, 5000);
    const keys = events.connected[0]!;
    // Ours: AES-GCM, then _80, then _32; s_client offers _32 and _80.
    expect(keys.profile).toBe('SRTP_AES128_CM_SHA1_80');
    expect(peer.srtpProfile()).toBe('SRTP_AES128_CM_SHA1_80');
    expect(exportedOrder(keys, 'server')).toBe(peer.keyingMaterial());
    peer.write('Q');
    await until(() => events.closed.length > 0, 5000);
    expect(events.closed).toEqual(['the peer closed the association (close_notify)']);
    expect(events.failed).toEqual([]);
    expect(endpoint.state).toBe('closed');
  });

  it("fails when s_client's certificate does not match, and s_client hears bad_certificate", async () => {
    const relay = new DtlsUdpRelay();
    const port = await relay.bind();
    const { endpoint, events } = endpointOn(relay, 'server', {
      remoteFingerprints: [ours.sdpFingerprint],
    });
    endpoint.start();
    const peer = await clientPeer(port);
    await until(() => events.failed.length > 0, 5000);
    expect(events.failed[0]!.kind).toBe('error');
    expect(events.failed[0]!.reason).toMatch(/does not match its SDP fingerprint/);
    await until(() => /alert bad certificate|alert number 42/.test(peer.output()), 5000);
    expect(events.connected).toEqual([]);
  });
});
