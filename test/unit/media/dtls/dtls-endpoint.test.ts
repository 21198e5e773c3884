import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  dtlsCertificateFromPem,
  generateDtlsCertificate,
} from '../../../../src/media/dtls/dtls-certificate.js';
import { DtlsContext } from '../../../../src/media/dtls/dtls-context.js';
import { DtlsEndpoint } from '../../../../src/media/dtls/dtls-endpoint.js';
import { certificateFingerprint } from '../../../../src/media/dtls/dtls-fingerprint.js';
import { linkDtls, settled } from '../../../support/dtls-link.js';
import { until } from '../../../support/wait.js';

const ours = generateDtlsCertificate();
const theirs = generateDtlsCertificate();

describe('DtlsEndpoint, our client against our server in memory', () => {
  it('completes the handshake in two flights each way, agreeing on AEAD_AES_128_GCM keys', async () => {
    const { client, server } = linkDtls({ certificate: ours }, { certificate: theirs });
    await until(() => settled(client) && settled(server));
    expect(client.endpoint.state).toBe('connected');
    expect(server.endpoint.state).toBe('connected');
    const [c] = client.connected;
    const [s] = server.connected;
    expect(client.connected).toHaveLength(1);
    expect(server.connected).toHaveLength(1);
    expect(c!.profile).toBe('SRTP_AEAD_AES_128_GCM');
    expect(s!.profile).toBe('SRTP_AEAD_AES_128_GCM');
    // RFC 7714: 16-byte keys, 12-byte salts; what one side sends with, the other receives with.
    expect([c!.localMasterKey.length, c!.localMasterSalt.length]).toEqual([16, 12]);
    expect(c!.localMasterKey).toEqual(s!.remoteMasterKey);
    expect(c!.localMasterSalt).toEqual(s!.remoteMasterSalt);
    expect(c!.remoteMasterKey).toEqual(s!.localMasterKey);
    expect(c!.remoteMasterSalt).toEqual(s!.localMasterSalt);
    expect(c!.localMasterKey).not.toEqual(c!.remoteMasterKey);
    // ClientHello, then the client's certificate flight; the server's flight and its Finished.
    expect(client.sent).toHaveLength(2);
    expect(server.sent).toHaveLength(2);
    for (const d of [...client.sent, ...server.sent]) expect(d.length).toBeLessThanOrEqual(1200);
    expect([client.failed, server.failed, client.errors, server.errors]).toEqual([[], [], [], []]);
  });

  it("selects the server's most preferred profile among the client's", async () => {
    const clientOnly80 = new DtlsContext(ours, {
      srtpProfiles: ['SRTP_AES128_CM_SHA1_32', 'SRTP_AES128_CM_SHA1_80'],
    });
    const { client, server } = linkDtls(
      { certificate: ours, context: clientOnly80 },
      { certificate: theirs },
    );
    await until(() => settled(client) && settled(server));
    expect(client.connected[0]!.profile).toBe('SRTP_AES128_CM_SHA1_80');
    expect(server.connected[0]!.profile).toBe('SRTP_AES128_CM_SHA1_80');
    expect(client.connected[0]!.localMasterSalt.length).toBe(14);
    expect(client.connected[0]!.localMasterKey).toEqual(server.connected[0]!.remoteMasterKey);
  });

  it('fragments flights to the MTU: a 4096-bit RSA certificate through 576-byte datagrams', async () => {
    const rsa = rsaCertificate(4096);
    const { client, server } = linkDtls(
      { certificate: ours, options: { mtu: 576 } },
      { certificate: rsa, options: { mtu: 576 } },
    );
    await until(() => settled(client) && settled(server));
    expect(client.endpoint.state).toBe('connected');
    expect(server.endpoint.state).toBe('connected');
    expect(client.connected[0]!.localMasterKey).toEqual(server.connected[0]!.remoteMasterKey);
    const sizes = [...client.sent, ...server.sent].map((d) => d.length);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(576);
    // The server's certificate alone (over 1,300 bytes) needs three datagrams at this MTU.
    expect(server.sent.length).toBeGreaterThanOrEqual(4);
  });

  it('fails the client on a server certificate that does not match the SDP fingerprint, and the server hears a bad_certificate alert', async () => {
    const { client, server } = linkDtls(
      { certificate: ours, remoteFingerprints: [generateDtlsCertificate().sdpFingerprint] },
      { certificate: theirs },
    );
    await until(() => settled(client) && settled(server));
    expect(client.endpoint.state).toBe('failed');
    expect(client.failed).toEqual([
      {
        kind: 'error',
        reason: expect.stringMatching(
          new RegExp(
            `^the peer's certificate does not match its SDP fingerprint \\(its SHA256 is ${theirs.fingerprint.value}\\) \\(sent a fatal alert bad certificate\\)$`,
          ),
        ),
      },
    ]);
    expect(server.failed).toEqual([
      { kind: 'alert', reason: 'the peer sent a fatal alert bad certificate' },
    ]);
    expect(client.connected).toEqual([]);
    expect(server.connected).toEqual([]);
  });

  it('fails the server on a client certificate that does not match, checked with the strongest hash given', async () => {
    const wrong512 = certificateFingerprint(generateDtlsCertificate().certPem, 'sha-512');
    const right256 = ours.sdpFingerprint;
    const { client, server } = linkDtls(
      { certificate: ours },
      { certificate: theirs, remoteFingerprints: [right256, `sha-512 ${wrong512.value}`] },
    );
    await until(() => settled(client) && settled(server));
    expect(server.failed).toHaveLength(1);
    expect(server.failed[0]!.kind).toBe('error');
    expect(server.failed[0]!.reason).toMatch(/does not match its SDP fingerprint \(its SHA512 is/);
    expect(client.failed).toEqual([
      { kind: 'alert', reason: 'the peer sent a fatal alert bad certificate' },
    ]);
  });

  it('accepts a certificate matching any fingerprint of the strongest hash, sha-1 and sha-384 too', async () => {
    for (const algorithm of ['sha-1', 'sha-384'] as const) {
      const match = certificateFingerprint(theirs.certPem, algorithm);
      const other = certificateFingerprint(ours.certPem, algorithm);
      const { client, server } = linkDtls(
        {
          certificate: ours,
          remoteFingerprints: [`${algorithm} ${other.value}`, `${algorithm} ${match.value}`],
        },
        { certificate: theirs },
      );
      await until(() => settled(client) && settled(server));
      expect([client.endpoint.state, server.endpoint.state]).toEqual(['connected', 'connected']);
    }
  });

  it("reports the peer's close_notify as closed, once", async () => {
    const { client, server } = linkDtls({ certificate: ours }, { certificate: theirs });
    await until(() => settled(client) && settled(server));
    client.endpoint.close();
    await until(() => server.closed.length > 0);
    expect(server.closed).toEqual(['the peer closed the association (close_notify)']);
    expect(server.endpoint.state).toBe('closed');
    expect(server.failed).toEqual([]);
    // The client's close_notify, and the server's answering one (the client takes no more).
    expect(client.sent).toHaveLength(3);
    expect(server.sent).toHaveLength(3);
    expect(client.closed).toEqual([]);
  });

  it('retransmits a lost flight on its timer and still completes', async () => {
    let dropped = 0;
    const { client, server } = linkDtls(
      { certificate: ours, options: { initialRetransmitMs: 50 } },
      { certificate: theirs, options: { initialRetransmitMs: 50 } },
      // The server's first flight is lost once.
      (d, from) => (from === 'server' && dropped++ === 0 ? [] : [d]),
    );
    await until(() => settled(client) && settled(server));
    expect([client.endpoint.state, server.endpoint.state]).toEqual(['connected', 'connected']);
    expect(client.endpoint.counters.retransmitted).toBeGreaterThanOrEqual(1);
    expect(client.connected[0]!.localMasterKey).toEqual(server.connected[0]!.remoteMasterKey);
  });

  it('times out a handshake the peer never answers, having retransmitted on the doubling timer', async () => {
    const failed: unknown[] = [];
    const sent: Buffer[] = [];
    const client = new DtlsEndpoint({
      context: new DtlsContext(ours),
      role: 'client',
      remoteFingerprints: [theirs.sdpFingerprint],
      handshakeTimeoutMs: 1100,
      initialRetransmitMs: 100,
      listener: { send: (d) => sent.push(d), onFailed: (f) => failed.push(f) },
    });
    client.start();
    await until(() => failed.length > 0, 3000);
    // ClientHello at 0 ms, again at 100, 300 and 700; the next would be at 1500.
    expect(sent).toHaveLength(4);
    expect(new Set(sent.map((d) => d.subarray(13).toString('hex'))).size).toBe(1);
    expect(failed).toEqual([
      {
        kind: 'timeout',
        reason:
          'the DTLS handshake did not complete within 1100 ms (0 datagrams received, 3 retransmitted)',
      },
    ]);
    expect(client.state).toBe('failed');
  });

  it('goes on when a listener throws, reporting the error', async () => {
    const { client, server } = linkDtls({ certificate: ours }, { certificate: theirs });
    const boom = new Error('listener bug');
    (client.endpoint as unknown as { listener: { onConnected: () => void } }).listener.onConnected =
      () => {
        throw boom;
      };
    await until(() => settled(client) && settled(server));
    expect(client.errors).toEqual([boom]);
    expect([client.endpoint.state, server.endpoint.state]).toEqual(['connected', 'connected']);
  });
});

describe('DtlsEndpoint arguments', () => {
  it('refuses bad options with a clear error', () => {
    const context = new DtlsContext(ours);
    const base = { context, role: 'client' as const, listener: { send: () => {} } };
    expect(() => new DtlsEndpoint({ ...base, remoteFingerprints: [] })).toThrow(
      "Expected at least one fingerprint of the peer's certificate",
    );
    expect(() => new DtlsEndpoint({ ...base, remoteFingerprints: ['md5 AA:BB'] })).toThrow(
      'Expected a fingerprint hash function among sha-1, sha-224, sha-256, sha-384, sha-512 but received "md5"',
    );
    expect(
      () => new DtlsEndpoint({ ...base, remoteFingerprints: [theirs.sdpFingerprint], mtu: 100 }),
    ).toThrow('Expected an integer between 576 and 9000 for mtu but received 100');
    const endpoint = new DtlsEndpoint({ ...base, remoteFingerprints: [theirs.sdpFingerprint] });
    expect(() => endpoint.feed('hello' as unknown as Uint8Array)).toThrow(
      'Expected a Uint8Array or Buffer for datagram but received "hello"',
    );
    endpoint.close();
  });
});

/** A self-signed RSA certificate made by the openssl tool. */
function rsaCertificate(bits: number) {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-dtls-rsa-'));
  try {
    const [cert, key] = [join(dir, 'cert.pem'), join(dir, 'key.pem')];
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        `rsa:${bits}`,
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=rsa',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    );
    return dtlsCertificateFromPem(readFileSync(cert, 'utf8'), readFileSync(key, 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
