import type { Socket } from 'node:net';
import { flowKey, type TransportProtocol } from './flow.js';

/**
 * The error reported for a TLS handshake that failed, so never became a connection. The
 * peer's address is named when it is still known (not once the peer has hung up).
 */
export function handshakeError(protocol: TransportProtocol, socket: Socket, error: Error): Error {
  const { remoteAddress, remotePort } = socket;
  const where =
    remoteAddress && remotePort
      ? `${flowKey(protocol, { address: remoteAddress, port: remotePort })}: `
      : '';
  return new Error(`${where}${protocol} handshake failed: ${error.message}`, { cause: error });
}
