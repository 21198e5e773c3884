import type { Socket } from 'node:net';
import { addon } from '../codec/native-addon.js';

/**
 * Caps the kernel's send buffer of a TCP socket (SO_SNDBUF, which also stops the kernel from
 * growing it). Left alone, loopback and LAN sockets buffer megabytes, seconds of a stream's
 * audio that neither side sees waiting; capped, a server that reads too slowly shows up in
 * the socket's own buffer at once, where the stream can count it. Returns the size the kernel
 * took (Linux doubles what it is given), or null when the socket has no descriptor to set.
 */
export function capSendBuffer(socket: Socket, bytes: number): number | null {
  if (!Number.isInteger(bytes) || bytes < 1024) {
    throw new RangeError(`Expected a send buffer of at least 1024 bytes but received ${bytes}`);
  }
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) return null;
  return addon.setSendBuffer(fd, bytes);
}
