import type { Socket } from 'node:dgram';
import { addon, type NativeDatagramReader } from '../codec/native-addon.js';

/** Where the datagrams read for one socket go: their bytes, and where they came from. */
export type DatagramHandler = (data: Buffer, port: number, address: string) => void;

/** Fields per datagram in a batch's meta: socket id, offset, length, source port, IPv4 source. */
const FIELDS = 5;

interface Reading {
  handler: DatagramHandler;
  /** The last source address seen, as a number and as text, so that text is made once. */
  ip: number;
  address: string;
}

const readings = new Map<number, Reading>();
let reader: NativeDatagramReader | null = null;
let nextId = 1;

/** One wake-up's datagrams, for every socket of the thread, to their handlers in order. */
function dispatch(bytes: Buffer, meta: Int32Array, count: number): void {
  for (let i = 0; i < count; i++) {
    const at = i * FIELDS;
    const reading = readings.get(meta[at]!);
    const port = meta[at + 3]!;
    if (!reading || port < 0) continue;
    const ip = meta[at + 4]! >>> 0;
    if (ip !== reading.ip) {
      reading.ip = ip;
      reading.address = `${ip >>> 24}.${(ip >>> 16) & 255}.${(ip >>> 8) & 255}.${ip & 255}`;
    }
    const offset = meta[at + 1]!;
    reading.handler(bytes.subarray(offset, offset + meta[at + 2]!), port, reading.address);
  }
}

/** What Node keeps of an open dgram socket: its handle, null once closed. */
interface DgramState {
  handle: { fd?: number; recvStop(): number } | null;
}

/**
 * Node's internal state of a dgram socket (`socket._handle`, the public way to the same, is
 * deprecated and warns); undefined if a Node version keeps it otherwise.
 */
function dgramState(socket: Socket): DgramState | undefined {
  const key = Object.getOwnPropertySymbols(socket).find((s) => s.description === 'state symbol');
  const state = key === undefined ? undefined : (socket as unknown as Record<symbol, unknown>)[key];
  return typeof state === 'object' && state !== null && 'handle' in state
    ? (state as DgramState)
    : undefined;
}

/**
 * Reads a bound IPv4 socket through the thread's one datagram reader instead of Node: every
 * socket of the thread in one epoll set, each ready one drained with recvmmsg, and one call
 * into JavaScript per wake-up with all that was read. Node's reading costs, per datagram, a
 * 64 KiB allocation, a Buffer, a source object and a callback with its microtask checkpoint.
 *
 * Node stops reading the socket; its sends, options and close stay Node's. Returns the function
 * that stops the reader reading it, to call before the socket is closed; null when the socket
 * stays with Node (IPv6, or a Node that keeps its state otherwise), its `message` events
 * unchanged. Datagrams over 2,048 bytes, which RTP over Ethernet never is, are dropped.
 */
export function readThroughReader(socket: Socket, handler: DatagramHandler): (() => void) | null {
  const handle = dgramState(socket)?.handle;
  const fd = handle?.fd;
  if (!handle || typeof fd !== 'number' || fd < 0) return null;
  if (socket.address().family !== 'IPv4') return null;
  reader ??= new addon.DatagramReader(dispatch);
  const id = nextId++;
  readings.set(id, { handler, ip: -1, address: '' });
  handle.recvStop();
  reader.add(fd, id);
  return () => {
    if (!readings.delete(id)) return;
    reader?.remove(fd);
  };
}
