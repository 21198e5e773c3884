import type { SipResponse } from '../message/index.js';
import type { Destination } from '../transport/transport-layer.js';
import type { DialogLayer } from './dialog-layer.js';
import { byeFromSnapshot, type DialogSnapshot } from './dialog-snapshot.js';

/** How a BYE from a snapshot went: its final response, or why there was none. */
export type SnapshotByeOutcome =
  { answered: true; response: SipResponse } | { answered: false; reason: string };

/**
 * Ends, towards its peer, a dialog this UA does not keep (its node died) from the snapshot that
 * node shared: a BYE (byeFromSnapshot) sent in a client transaction of this stack, with this
 * stack's Via. Resolves with its final response, or unanswered: no response within 64*T1, a
 * transport error, or a peer that cannot be reached from here. A challenge is not answered:
 * the snapshot carries no credentials.
 */
export async function sendSnapshotBye(
  layer: DialogLayer,
  snapshot: DialogSnapshot,
): Promise<SnapshotByeOutcome> {
  const bye = byeFromSnapshot(snapshot);
  let destination: Destination;
  try {
    destination = await snapshotDestination(layer, snapshot);
  } catch (error) {
    return { answered: false, reason: `unreachable: ${(error as Error).message}` };
  }
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: SnapshotByeOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const unanswered = (reason: string) => settle({ answered: false, reason });
    try {
      layer.sendRequest(bye, destination, {
        onResponse: (response) => {
          if (response.status >= 200) settle({ answered: true, response });
        },
        onTimeout: () => unanswered('no final response within 64*T1'),
        onTransportError: (error) => unanswered(`transport error: ${error.message}`),
      });
    } catch (error) {
      unanswered(`not sent: ${(error as Error).message}`);
    }
  });
}

/**
 * Where the BYE goes. The dialog's own node sent every request on the flow it was pinned to;
 * from another node:
 * - a UDP flow (a NAT binding, the address an INVITE came from) is sent to as it was;
 * - a TCP or TLS connection is gone with its node: the next hop is found anew from the route
 *   set or remote target (RFC 3263 through the dialog layer), which reaches a peer that
 *   listens where it says it does, not one that only ever connected out;
 * - a WebSocket peer (its contact an .invalid host, RFC 7118) is reached only over the
 *   connection its node held: it cannot be.
 */
export function snapshotDestination(
  layer: DialogLayer,
  snapshot: DialogSnapshot,
): Promise<Destination> {
  const { pinned } = snapshot;
  if (pinned?.protocol === 'WS' || pinned?.protocol === 'WSS') {
    return Promise.reject(
      new Error('a WebSocket peer is reached only over the connection its node held'),
    );
  }
  if (pinned?.protocol === 'UDP') {
    return Promise.resolve({
      protocol: 'UDP',
      address: { address: pinned.address, port: pinned.port },
    });
  }
  return layer.destinationOf(snapshot.remoteTarget, snapshot.routeSet);
}
