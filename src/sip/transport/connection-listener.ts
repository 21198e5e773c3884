import type { Flow } from './flow.js';
import type { TransportListener } from './udp-transport.js';

/** What a connection-oriented transport (TCP, TLS, WS, WSS) reports upward. */
export interface ConnectionListener extends TransportListener {
  /**
   * A connection ended, whoever closed it. Anything bound to its flow (a registration over
   * RFC 5626 outbound, a WebSocket client's contact) can no longer be reached through it.
   */
  onClose?(flow: Flow): void;
}
