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
