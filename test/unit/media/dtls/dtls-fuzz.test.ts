import { describe, expect, it } from 'vitest';
import { generateDtlsCertificate } from '../../../../src/media/dtls/dtls-certificate.js';
import { DtlsContext } from '../../../../src/media/dtls/dtls-context.js';
import { DtlsEndpoint } from '../../../../src/media/dtls/dtls-endpoint.js';
import { linkDtls, settled, type DtlsRecord } from '../../../support/dtls-link.js';
import { seededRandom } from '../../../support/prng.js';
import { until } from '../../../support/wait.js';

/**
 * Garbage where DTLS datagrams are expected. RFC 6347 4.1.2.7: "Invalid records SHOULD be
 * silently discarded": they do not stop a handshake. Records that are well formed but forged
 * (plaintext handshake messages, ChangeCipherSpec and alerts, which anyone able to reach the
 * port can send) may end it, as in any DTLS 1.2 implementation: epoch 0 has no MAC, so a forged
 * record is taken as real and its sequence number moves the replay window (RFC 6347 4.1.2.6)
 * past the peer's real records. Then both sides report why. Nothing throws.
 */
const ours = generateDtlsCertificate();
const theirs = generateDtlsCertificate();

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T =>
  items[Math.floor(random() * items.length)]!;

/** A DTLS record header and `body`: type, DTLS 1.2, epoch, a random sequence number. */
function record(random: Random, type: number, epoch: number, body: Buffer): Buffer {
  const header = Buffer.alloc(13);
  header[0] = type;
  header.writeUInt16BE(0xfefd, 1);
  header.writeUInt16BE(epoch, 3);
  header.writeUIntBE(Math.floor(random() * 2 ** 40), 5, 6);
  header.writeUInt16BE(body.length, 11);
  return Buffer.concat([header, body]);
}

function randomBytes(random: Random, length: number): Buffer {
  return Buffer.from(Array.from({ length }, () => Math.floor(random() * 256)));
}

/** A handshake message header (RFC 6347 4.2.2) and random content. */
function handshakeMessage(random: Random, messageSeq: number): Buffer {
  const content = randomBytes(random, Math.floor(random() * 300));
  const header = Buffer.alloc(12);
  header[0] = pick(random, [1, 2, 3, 11, 12, 13, 14, 15, 16, 20]);
  header.writeUIntBE(content.length, 1, 3);
  header.writeUInt16BE(messageSeq, 4);
  header.writeUIntBE(content.length, 9, 3);
  return Buffer.concat([header, content]);
}

/** Invalid records, each of a kind DTLS discards: none is for the handshake to judge. */
function invalidDatagram(random: Random): Buffer {
  switch (Math.floor(random() * 5)) {
    case 0: {
      // Random bytes the RFC 7983 demultiplexer takes for DTLS.
      const bytes = randomBytes(random, 1 + Math.floor(random() * 600));
      bytes[0] = 20 + Math.floor(random() * 44);
      return bytes;
    }
    case 1:
      // Protected records with no valid protection.
      return record(
        random,
        pick(random, [21, 22, 23]),
        1,
        randomBytes(random, 40 + Math.floor(random() * 200)),
      );
    case 2:
      return record(random, 20, 0, randomBytes(random, pick(random, [0, 2, 3, 17])));
    case 3:
      return record(random, 21, 0, randomBytes(random, pick(random, [0, 1, 3, 9])));
    default:
      // Plaintext application data, or a record whose length runs past the datagram.
      return random() < 0.5
        ? record(random, 23, 0, randomBytes(random, 30))
        : record(random, 22, 0, randomBytes(random, 50)).subarray(0, 40);
  }
}

/** Well-formed plaintext records a forger could send: handshake messages, CCS, alerts. */
function forgedDatagram(random: Random): Buffer {
  const kind = random();
  if (kind < 0.3) return record(random, 22, 0, handshakeMessage(random, Math.floor(random() * 4)));
  if (kind < 0.6)
    return record(random, 22, 0, handshakeMessage(random, Math.floor(random() * 60000)));
  if (kind < 0.8) return record(random, 20, 0, Buffer.from([1]));
  return record(random, 21, 0, Buffer.from([pick(random, [1, 2]), Math.floor(random() * 120)]));
}

const bothKeysAgree = (client: DtlsRecord, server: DtlsRecord) =>
  client.connected[0]!.localMasterKey.equals(server.connected[0]!.remoteMasterKey) &&
  client.connected[0]!.remoteMasterKey.equals(server.connected[0]!.localMasterKey);

describe('DtlsEndpoint fed garbage', () => {
  it('discards 3,200 invalid datagrams fed to both sides mid-handshake and completes', async () => {
    const random = seededRandom(7983);
    let injected = 0;
    const { client, server } = linkDtls({ certificate: ours }, { certificate: theirs }, (d) => {
      const junk = Array.from({ length: 800 }, () => invalidDatagram(random));
      injected += junk.length;
      return [...junk, d];
    });
    await until(() => settled(client) && settled(server), 10_000);
    // The four datagrams of the handshake, each after 800 invalid ones.
    expect(injected).toBe(3200);
    expect([client.endpoint.state, server.endpoint.state]).toEqual(['connected', 'connected']);
    expect(bothKeysAgree(client, server)).toBe(true);
    expect([client.failed, server.failed]).toEqual([[], []]);
    expect(client.endpoint.counters.retransmitted + server.endpoint.counters.retransmitted).toBe(0);

    // Once connected, garbage changes nothing either.
    for (let i = 0; i < 1000; i++) {
      client.endpoint.feed(invalidDatagram(random));
      server.endpoint.feed(invalidDatagram(random));
    }
    expect([client.endpoint.state, server.endpoint.state]).toEqual(['connected', 'connected']);
    expect([client.failed, server.failed, client.closed, server.closed]).toEqual([[], [], [], []]);
  });

  it('ends 40 handshakes with 3,200 forged records among them either connected with agreeing keys or failed on both sides with a reason', async () => {
    const random = seededRandom(6347);
    const links = Array.from({ length: 40 }, () =>
      linkDtls(
        { certificate: ours, options: { handshakeTimeoutMs: 3000, initialRetransmitMs: 50 } },
        { certificate: theirs, options: { handshakeTimeoutMs: 3000, initialRetransmitMs: 50 } },
        (d) => [...Array.from({ length: 20 }, () => forgedDatagram(random)), d],
      ),
    );
    await until(
      () => links.every(({ client, server }) => settled(client) && settled(server)),
      10_000,
    );
    let connected = 0;
    let failed = 0;
    for (const { client, server } of links) {
      if (client.endpoint.state === 'connected' && server.endpoint.state === 'connected') {
        expect(bothKeysAgree(client, server)).toBe(true);
        connected++;
        continue;
      }
      // Neither side is left believing in a handshake the other gave up: each failed, once,
      // with its reason (its own error, the peer's alert, or the deadline).
      expect([client.endpoint.state, server.endpoint.state]).toEqual(['failed', 'failed']);
      for (const side of [client, server]) {
        expect(side.failed).toHaveLength(1);
        expect(['timeout', 'alert', 'error']).toContain(side.failed[0]!.kind);
        expect(side.failed[0]!.reason).not.toBe('');
        expect(side.errors).toEqual([]);
      }
      failed++;
    }
    expect(connected + failed).toBe(40);
  });

  it('survives 3,000 mutations of real handshake datagrams fed to fresh endpoints', async () => {
    const { client, server } = linkDtls({ certificate: ours }, { certificate: theirs });
    await until(() => settled(client) && settled(server));
    const real = [...client.sent.slice(0, 2), ...server.sent.slice(0, 2)];
    const random = seededRandom(5764);
    const context = new DtlsContext(theirs);
    const outcomes = new Map<string, number>();
    for (let i = 0; i < 3000; i++) {
      const source = real[i % real.length]!;
      const mutated = Buffer.from(source.subarray(0, 1 + Math.floor(random() * source.length)));
      for (let flips = 1 + Math.floor(random() * 4); flips > 0; flips--) {
        mutated[Math.floor(random() * mutated.length)]! ^= 1 << Math.floor(random() * 8);
      }
      const endpoint = new DtlsEndpoint({
        context,
        role: i % 2 === 0 ? 'server' : 'client',
        remoteFingerprints: [ours.sdpFingerprint],
        listener: { send: () => {} },
      });
      endpoint.start();
      endpoint.feed(mutated);
      outcomes.set(endpoint.state, (outcomes.get(endpoint.state) ?? 0) + 1);
      endpoint.close();
    }
    expect([...outcomes.values()].reduce((a, b) => a + b)).toBe(3000);
    expect([...outcomes.keys()].every((s) => ['handshaking', 'failed'].includes(s))).toBe(true);
  });
});
