import { randomBytes } from 'node:crypto';

/** A transport protocol as it appears in a Via header. */
export type TransportProtocol = 'UDP' | 'TCP' | 'TLS' | 'WS' | 'WSS';

export interface Address {
  address: string;
  port: number;
}

/**
 * Where a message came from and how: the protocol, both ends, and for connection-oriented
 * transports the connection, so that responses can go back on it (RFC 3261 18.2.2).
 */
export interface Flow {
  protocol: TransportProtocol;
  local: Address;
  remote: Address;
  /** Set for TCP, TLS and WebSocket: the connection the message arrived on. */
  connectionId?: string;
}

export const isReliable = (protocol: TransportProtocol): boolean => protocol !== 'UDP';

export const flowKey = (protocol: TransportProtocol, remote: Address): string =>
  `${protocol}:${remote.address.includes(':') ? `[${remote.address}]` : remote.address}:${remote.port}`;

/**
 * The start of the connection ids of one transport: its protocol and a random part, so that
 * ids are unique across transports, processes and nodes (`ws-3f9a0c1e-7`).
 */
export const connectionIdPrefix = (protocol: TransportProtocol): string =>
  `${protocol.toLowerCase()}-${randomBytes(4).toString('hex')}`;
