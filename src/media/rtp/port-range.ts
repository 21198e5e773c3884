import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';

export interface PortRange {
  min: number;
  max: number;
}

/** Reads a range like VOXGATE_RTP_PORTS's "20000-29999". */
export function parsePortRange(text: string): PortRange {
  const match = /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(text);
  if (!match)
    throw new RangeError(`Expected a port range like "20000-29999" but received "${text}"`);
  const min = Number(match[1]);
  const max = Number(match[2]);
  if (min < 1 || max > 65535 || min > max)
    throw new RangeError(
      `Expected a port range between 1 and 65535 with min <= max but received "${text}"`,
    );
  if (firstEven(min) + 1 > max)
    throw new RangeError(`The port range "${text}" holds no even port with its odd neighbour`);
  return { min, max };
}

const firstEven = (port: number): number => port + (port % 2);

export interface BoundPair {
  rtp: Socket;
  rtcp: Socket;
  port: number;
  /** RTP that reached a pair bound ahead before its session took it, oldest first. */
  early?: [Buffer, RemoteInfo][];
}

/** Whatever hands out bound RTP/RTCP socket pairs. */
export interface PairSource {
  bindPair(): Promise<BoundPair>;
}

/**
 * Walks the range from a starting point and binds the first even port whose odd neighbour is
 * also free: RFC 3550 11, "RTP SHOULD use an even destination port number and the
 * corresponding RTCP stream SHOULD use the next higher (odd) destination port number".
 */
export class PortAllocator implements PairSource {
  private readonly first: number;
  private readonly last: number;
  private next: number;

  constructor(
    readonly range: PortRange,
    private readonly host = '0.0.0.0',
    random: () => number = Math.random,
  ) {
    this.first = firstEven(range.min);
    this.last = range.max - 1 - ((range.max - 1) % 2);
    // Start somewhere in the range so that a restart does not reach for the same ports at once.
    this.next = this.first + 2 * Math.floor(random() * this.pairs);
  }

  /** How many even/odd pairs the range holds. */
  get pairs(): number {
    return (this.last - this.first) / 2 + 1;
  }

  async bindPair(): Promise<BoundPair> {
    for (let tried = 0; tried < this.pairs; tried++) {
      const port = this.next;
      this.next = port + 2 > this.last ? this.first : port + 2;
      const rtp = await bindOrNull(this.host, port);
      if (!rtp) continue;
      const rtcp = await bindOrNull(this.host, port + 1);
      if (!rtcp) {
        await closeSocket(rtp);
        continue;
      }
      return { rtp, rtcp, port };
    }
    // Every pair in use (by calls or by other programs): the range is the setting to widen.
    throw new Error(
      `no free even port pair in ${this.range.min}-${this.range.max} (VOXGATE_RTP_PORTS)`,
    );
  }

  /** Moves the walk to `port`, rounded up to even; tests aim it at ports they hold. */
  startAt(port: number): void {
    this.next = Math.max(this.first, Math.min(firstEven(port), this.last));
  }
}

function bindOrNull(host: string, port: number): Promise<Socket | null> {
  const socket = createSocket({ type: isIPv6(host) ? 'udp6' : 'udp4', reuseAddr: false });
  return new Promise((resolve) => {
    const fail = (): void => {
      socket.close();
      resolve(null);
    };
    socket.once('error', fail);
    socket.bind(port, host, () => {
      socket.off('error', fail);
      resolve(socket);
    });
  });
}

export const closeSocket = (socket: Socket): Promise<void> =>
  new Promise((resolve) => {
    try {
      socket.close(() => resolve());
    } catch {
      resolve();
    }
  });

/** Packets kept for a pair bound ahead until its session takes it. */
const EARLY_PACKETS = 25;

/**
 * Keeps pairs bound ahead of need and reserved by someone else: the pairs bound are announced
 * to `onBound`, and only `take(port)` hands one out, so whoever holds the announcements (the
 * main thread) can put a port in an SDP without waiting for a busy worker to bind it. Taken
 * pairs are replaced in the background once half of `target` is gone, and the pairs of one
 * refill are announced together: each announcement is a message to the main thread, and one
 * per call would wake it once more per call. `bindPair` is for sessions with no reserved
 * port: it binds on demand and never hands out an announced pair.
 */
export class PreboundPairs implements PairSource {
  private readonly spare = new Map<
    number,
    BoundPair & { hold: (d: Buffer, r: RemoteInfo) => void }
  >();
  private filling: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly allocator: PortAllocator,
    private readonly target = 8,
    private readonly onBound: (ports: number[]) => void = () => {},
  ) {}

  get ready(): number {
    return this.spare.size;
  }

  bindPair(): Promise<BoundPair> {
    return this.allocator.bindPair();
  }

  /** Whether the pair on `port` is bound and not yet taken. */
  holds(port: number): boolean {
    return this.spare.has(port);
  }

  /** The announced pair on `port`; a replacement is bound in the background. */
  take(port: number): BoundPair {
    const pair = this.spare.get(port);
    if (!pair) throw new Error(`no reserved RTP port pair on ${port}`);
    this.spare.delete(port);
    pair.rtp.off('message', pair.hold);
    if (this.spare.size <= this.target / 2) void this.refill();
    return { rtp: pair.rtp, rtcp: pair.rtcp, port: pair.port, early: pair.early };
  }

  /** Binds pairs until `target` are ready (or the range has no more). */
  refill(): Promise<void> {
    this.filling ??= this.fill().finally(() => (this.filling = null));
    return this.filling;
  }

  private async fill(): Promise<void> {
    const bound: number[] = [];
    try {
      while (this.spare.size < this.target && !this.closed) {
        const pair = await this.allocator.bindPair();
        // Its port may be in an SDP before the session takes it: a fast peer's first packets
        // are kept (a few) for the session rather than lost.
        const early: [Buffer, RemoteInfo][] = [];
        const hold = (data: Buffer, from: RemoteInfo) => {
          if (early.length < EARLY_PACKETS) early.push([data, from]);
        };
        pair.rtp.on('message', hold);
        this.spare.set(pair.port, { ...pair, early, hold });
        bound.push(pair.port);
      }
    } catch {
      // The range is used up: later sessions bind on demand, and get its error if it stays so.
    }
    if (this.closed) return this.close();
    if (bound.length > 0) this.onBound(bound);
  }

  async close(): Promise<void> {
    this.closed = true;
    const pairs = [...this.spare.values()];
    this.spare.clear();
    await Promise.all(pairs.flatMap((pair) => [closeSocket(pair.rtp), closeSocket(pair.rtcp)]));
  }
}
