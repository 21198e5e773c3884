import { SipRequest } from '../message/index.js';
import type { TransportProtocol } from '../transport/flow.js';
import type { Dialog } from './dialog.js';
import { requestTarget } from './next-hop.js';

/**
 * What another node needs to end a dialog whose UA (a gateway node) died: the dialog id, the
 * From and To its requests carry, where they go, and the local CSeq. A plain JSON object, kept
 * in shared state beside the call. No credentials: a BYE from a snapshot that is challenged is
 * not answered (the dialog's credentials stay with the node that made it).
 */
export interface DialogSnapshot {
  callId: string;
  localTag: string;
  remoteTag: string;
  /** The From of our requests: the local URI with our tag. */
  localAddress: string;
  /** The To of our requests: the remote URI with the peer's tag. */
  remoteAddress: string;
  remoteTarget: string;
  /** Route values (name-addr), in the order requests carry them. */
  routeSet: string[];
  /** The local CSeq as the snapshot was taken; null when we had sent no request in it. */
  localSeq: number | null;
  /**
   * The flow every request of the dialog went on (the peer's connection, a NAT binding), when
   * it was pinned to one. Its connection id is the owner's alone and is left out.
   */
  pinned: { protocol: TransportProtocol; address: string; port: number } | null;
}

/**
 * How far past the snapshot's CSeq a BYE from it goes, so that the snapshot need not be
 * rewritten for every request sent in the dialog (the node that made it sends at most a few
 * more). A gap is something a peer takes, RFC 3261 12.2.2: "a UAS SHOULD be prepared to
 * receive and process requests with CSeq values more than one higher than the previous
 * received request"; what it refuses is a lower one.
 */
export const SNAPSHOT_CSEQ_MARGIN = 100;

/** The snapshot of a dialog as it stands. */
export function snapshotOf(dialog: Dialog): DialogSnapshot {
  const { pinned } = dialog;
  return {
    callId: dialog.callId,
    localTag: dialog.localTag,
    remoteTag: dialog.remoteTag,
    localAddress: dialog.localAddress,
    remoteAddress: dialog.remoteAddress,
    remoteTarget: dialog.remoteTarget,
    routeSet: [...dialog.routeSet],
    localSeq: dialog.localSeq,
    pinned: pinned
      ? { protocol: pinned.protocol, address: pinned.address.address, port: pinned.address.port }
      : null,
  };
}

const PROTOCOLS = new Set<string>(['UDP', 'TCP', 'TLS', 'WS', 'WSS']);
const isText = (value: unknown): value is string => typeof value === 'string';

/**
 * A snapshot read back from shared state, or null when `value` is not one (absent from an
 * entry of an older node, or damaged).
 */
export function readDialogSnapshot(value: unknown): DialogSnapshot | null {
  if (typeof value !== 'object' || value === null) return null;
  const s = value as Partial<Record<keyof DialogSnapshot, unknown>>;
  const texts = [s.callId, s.localTag, s.remoteTag, s.localAddress, s.remoteAddress];
  if (!texts.every(isText) || !isText(s.remoteTarget) || s.callId === '') return null;
  if (!Array.isArray(s.routeSet) || !s.routeSet.every(isText)) return null;
  if (s.localSeq !== null && !Number.isInteger(s.localSeq)) return null;
  const pinned = s.pinned as DialogSnapshot['pinned'] | undefined;
  if (pinned !== null) {
    if (typeof pinned !== 'object' || !PROTOCOLS.has(pinned.protocol)) return null;
    if (!isText(pinned.address) || !Number.isInteger(pinned.port)) return null;
  }
  return value as DialogSnapshot;
}

/**
 * RFC 3261 15.1.1 and 12.2.1.1: a BYE in the snapshot's dialog, built as the dialog would
 * build it (From, To and Call-ID from the dialog, Request-URI and Route from the remote target
 * and route set) with a CSeq SNAPSHOT_CSEQ_MARGIN past the snapshot's. Without Via: the stack
 * that sends it adds its own.
 */
export function byeFromSnapshot(snapshot: DialogSnapshot): SipRequest {
  const target = requestTarget(snapshot.remoteTarget, snapshot.routeSet);
  const seq = (snapshot.localSeq ?? 0) + SNAPSHOT_CSEQ_MARGIN;
  const rows: [string, string][] = [
    ['Max-Forwards', '70'],
    ['From', snapshot.localAddress],
    ['To', snapshot.remoteAddress],
    ['Call-ID', snapshot.callId],
    ['CSeq', `${seq} BYE`],
    ...target.routes.map((route): [string, string] => ['Route', route]),
  ];
  return new SipRequest({ method: 'BYE', uri: target.uri, headers: rows });
}
