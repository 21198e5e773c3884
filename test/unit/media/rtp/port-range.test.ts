import { createSocket, type Socket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import {
  parsePortRange,
  PortAllocator,
  PreboundPairs,
} from '../../../../src/media/rtp/port-range.js';

describe('RTP port range', () => {
  it('reads "min-max"', () => {
    expect(parsePortRange('20000-29999')).toEqual({ min: 20000, max: 29999 });
    expect(parsePortRange(' 10000 - 10001 ')).toEqual({ min: 10000, max: 10001 });
  });

  it.each(['20000', '2-1', '0-100', '1000-70000', 'a-b', '10001-10002x', '10001-10001'])(
    'refuses "%s"',
    (text) => {
      expect(() => parsePortRange(text)).toThrow(RangeError);
    },
  );
});

describe('PortAllocator', () => {
  const held: Socket[] = [];
  const hold = (port: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const socket = createSocket('udp4');
      socket.once('error', reject);
      socket.bind(port, '127.0.0.1', () => {
        held.push(socket);
        resolve();
      });
    });

  afterEach(() => {
    for (const socket of held.splice(0)) socket.close();
  });

  /** A free run of `length` ports starting on an even number, found by trying. */
  async function freeBase(length: number): Promise<number> {
    for (let base = 41000 + 2 * Math.floor(Math.random() * 5000); ; base += length + 2) {
      const allocator = new PortAllocator({ min: base, max: base + length - 1 }, '127.0.0.1');
      allocator.startAt(base);
      const pair = await allocator.bindPair().catch(() => undefined);
      if (!pair) continue;
      pair.rtp.close();
      pair.rtcp.close();
      if (pair.port === base) return base;
    }
  }

  it('binds even ports with RTCP on the next, skipping pairs with either port taken', async () => {
    const base = await freeBase(8);
    await hold(base); // even port taken
    await hold(base + 3); // odd neighbour of base + 2 taken
    const allocator = new PortAllocator({ min: base, max: base + 7 }, '127.0.0.1');
    allocator.startAt(base);
    const pair = await allocator.bindPair();
    expect(pair.port).toBe(base + 4);
    expect(pair.rtp.address().port).toBe(base + 4);
    expect(pair.rtcp.address().port).toBe(base + 5);
    const next = await allocator.bindPair();
    expect(next.port).toBe(base + 6);
    for (const socket of [pair.rtp, pair.rtcp, next.rtp, next.rtcp]) socket.close();
  });

  it('starts on an even port for an odd range start and fails when the range is full', async () => {
    const base = await freeBase(4);
    const allocator = new PortAllocator({ min: base - 1, max: base + 1 }, '127.0.0.1');
    expect(allocator.pairs).toBe(1);
    const pair = await allocator.bindPair();
    expect(pair.port).toBe(base);
    await expect(allocator.bindPair()).rejects.toThrow(/no free even port pair/);
    pair.rtp.close();
    pair.rtcp.close();
  });

  it('replaces taken pairs once half are gone, announcing the pairs of a refill together', async () => {
    const base = await freeBase(16);
    const announcements: number[][] = [];
    const pairs = new PreboundPairs(
      new PortAllocator({ min: base, max: base + 15 }, '127.0.0.1'),
      4,
      (ports) => announcements.push(ports),
    );
    await pairs.refill();
    expect(announcements).toHaveLength(1);
    expect(announcements[0]).toHaveLength(4);
    const [first, second] = announcements[0]!;
    const taken = [pairs.take(first!)];
    // Three of four left: no refill yet, so no message.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(pairs.ready).toBe(3);
    expect(announcements).toHaveLength(1);
    taken.push(pairs.take(second!));
    await pairs.refill(); // the refill take() started
    expect(pairs.ready).toBe(4);
    expect(announcements).toHaveLength(2);
    expect(announcements[1]).toHaveLength(2);
    const all = announcements.flat();
    expect(new Set(all).size).toBe(6);
    for (const pair of taken) {
      pair.rtp.close();
      pair.rtcp.close();
    }
    await pairs.close();
  });

  it('announces each pair it binds ahead, hands it out only to take(), and binds on demand otherwise', async () => {
    const base = await freeBase(6);
    const announced: number[] = [];
    const pairs = new PreboundPairs(
      new PortAllocator({ min: base, max: base + 5 }, '127.0.0.1'),
      2,
      (ports) => announced.push(...ports),
    );
    await pairs.refill();
    expect(pairs.ready).toBe(2);
    expect(announced).toHaveLength(2);
    // A session with no reserved port never gets an announced pair.
    const onDemand = await pairs.bindPair();
    expect(announced).not.toContain(onDemand.port);
    // A peer that got the port in an SDP may send before the session takes the pair.
    const sender = createSocket('udp4');
    sender.send(Buffer.from('early rtp'), announced[0]!, '127.0.0.1');
    await new Promise((resolve) => setTimeout(resolve, 50));
    sender.close();
    const taken = pairs.take(announced[0]!);
    expect(taken.port).toBe(announced[0]);
    expect(taken.early?.map(([data]) => data.toString())).toEqual(['early rtp']);
    expect(pairs.holds(announced[0]!)).toBe(false);
    expect(pairs.holds(announced[1]!)).toBe(true);
    expect(() => pairs.take(announced[0]!)).toThrow(/no reserved RTP port pair/);
    // The range is used up: the refill after take() finds nothing, and asking says so.
    await pairs.refill();
    expect(pairs.ready).toBe(1);
    expect(announced).toHaveLength(2);
    await expect(pairs.bindPair()).rejects.toThrow(/no free even port pair/);
    const ports = [onDemand.port, taken.port, announced[1]!];
    expect(new Set(ports).size).toBe(3);
    for (const port of ports) expect(port % 2).toBe(0);
    for (const pair of [onDemand, taken]) {
      pair.rtp.close();
      pair.rtcp.close();
    }
    await pairs.close();
  });
});
