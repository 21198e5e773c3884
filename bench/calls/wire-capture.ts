import type { CapturedPacket } from '../../test/support/pcap.js';
import { startLoopbackCapture, tcpDataStarts, udpDataStarts } from '../api/loopback-capture.js';

/**
 * Post-dial delay as the wire shows it: tcpdump on loopback records, with the kernel's
 * timestamps, every POST sent to the gateway's REST port and every INVITE sent to the tap,
 * and call n's delay is from its POST (`sip_headers=bench=n` in the body) to its INVITE
 * (`X-PH-bench: n`). Unlike the generator's clock, this does not count the time the
 * generator's own process waits for a core before it writes a request or reads an INVITE,
 * which at real-time priority for the gateway is most of the tail it would report.
 */
export interface WireCapture {
  /** Delay of each call numbered n whose POST and INVITE have both been captured, ms. */
  postDialDelays(): Map<number, number>;
  /** Stops tcpdump; resolves with the packets the kernel dropped (0 unless overloaded). */
  stop(): Promise<{ droppedPackets: number }>;
}

export type WireCaptureStart = { ok: true; capture: WireCapture } | { ok: false; reason: string };

const POST_IN_BODY = /"sip_headers":"bench=(\d+)"/;
const BENCH_HEADER = /\r\nX-PH-bench:\s*(\d+)/i;

/** Starts tcpdump on the POSTs to the API and the INVITEs to the tap; `ok: false` says why not. */
export async function startWireCapture(ports: {
  api: number;
  tap: number;
}): Promise<WireCaptureStart> {
  const started = await startLoopbackCapture(
    `${tcpDataStarts(ports.api, 'POST')} or ${udpDataStarts(ports.tap, 'INVI')}`,
  );
  if (!started.ok) return started;
  const { capture } = started;
  return {
    ok: true,
    capture: {
      postDialDelays: () => delaysIn(capture.packets()),
      stop: async () => ({ droppedPackets: (await capture.stop()).droppedPackets }),
    },
  };
}

function delaysIn(packets: CapturedPacket[]): Map<number, number> {
  const posts = new Map<number, number>();
  const invites = new Map<number, number>();
  for (const packet of packets) {
    const text = packet.payload.toString('latin1');
    const [pattern, seen] =
      packet.protocol === 'tcp' ? [POST_IN_BODY, posts] : [BENCH_HEADER, invites];
    const match = pattern.exec(text);
    if (!match) continue;
    const n = Number(match[1]);
    // The first one counts: a retransmitted INVITE is not the moment the call went out.
    if (!seen.has(n)) seen.set(n, packet.atMicros);
  }
  const delays = new Map<number, number>();
  for (const [n, postAt] of posts) {
    const inviteAt = invites.get(n);
    if (inviteAt !== undefined) delays.set(n, (inviteAt - postAt) / 1000);
  }
  return delays;
}
