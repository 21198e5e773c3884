import type { HandshakeCase, MixCase, RelayCase } from './relay-cases.js';

/** One figure for plain PCMU legs and for WebRTC legs (SRTP, Opus) in the same run. */
export interface LegComparison {
  what: string;
  pcmu: number | null;
  webrtc: number | null;
  /** webrtc / pcmu. */
  ratio: number | null;
}

const ratio = (webrtc: number | null, pcmu: number | null) =>
  webrtc !== null && pcmu ? Math.round((webrtc / pcmu) * 100) / 100 : null;

const pair = (
  what: string,
  pcmu: number | null | undefined,
  webrtc: number | null | undefined,
): LegComparison => ({
  what,
  pcmu: pcmu ?? null,
  webrtc: webrtc ?? null,
  ratio: ratio(webrtc ?? null, pcmu ?? null),
});

/** The relay steps at the same offered rate, the mix cases and the handshakes, side by side. */
export function compareLegs(
  relay: readonly RelayCase[],
  mix: readonly MixCase[],
  handshakes: readonly HandshakeCase[],
): LegComparison[] {
  const rows: LegComparison[] = [];
  for (const webrtc of relay.filter((c) => c.leg === 'webrtc')) {
    const plain = relay.find((c) => c.leg === 'pcmu' && c.pairs === webrtc.pairs);
    for (const step of webrtc.steps) {
      const same = plain?.steps.find((s) => s.offered === step.offered);
      rows.push(
        pair(
          `relay ${webrtc.pairs} pairs ${step.offered}: worker net µs/packet`,
          same?.workerNetUsPerPacket,
          step.workerNetUsPerPacket,
        ),
      );
    }
  }
  for (const webrtc of mix.filter((c) => c.leg === 'webrtc')) {
    const plain = mix.find(
      (c) => c.leg === 'pcmu' && c.pairs === webrtc.pairs && c.mode === webrtc.mode,
    );
    rows.push(
      pair(
        `${webrtc.mode} ${webrtc.pairs} calls, 50 packets/s: worker µs/call-second`,
        plain?.workerUsPerCallSecond,
        webrtc.workerUsPerCallSecond,
      ),
    );
  }
  const plain = handshakes.find((h) => h.leg === 'pcmu');
  const webrtc = handshakes.find((h) => h.leg === 'webrtc');
  if (webrtc) {
    const n = `${webrtc.handshakes} legs, ${webrtc.concurrency} at a time`;
    rows.push(
      pair(
        `leg up (${n}): p50 ms to first RTP`,
        plain?.firstPacketMs.p50,
        webrtc.firstPacketMs.p50,
      ),
      pair(
        `leg up (${n}): p99 ms to first RTP`,
        plain?.firstPacketMs.p99,
        webrtc.firstPacketMs.p99,
      ),
      pair(`leg up (${n}): p99 ms to DTLS done`, null, webrtc.connectedMs?.p99),
      pair(
        `leg up (${n}): worker µs per leg`,
        plain?.workerUsPerHandshake,
        webrtc.workerUsPerHandshake,
      ),
    );
  }
  return rows;
}

export function legComparisonLines(rows: readonly LegComparison[]): string[] {
  if (rows.length === 0) return [];
  const show = (n: number | null) => (n === null ? '-' : String(n));
  const width = Math.max(...rows.map((r) => r.what.length));
  return [
    'WebRTC legs (ICE-lite, DTLS-SRTP, Opus 16 kHz at 48 kHz clock) against plain PCMU, same run:',
    `${'case'.padEnd(width)}  ${'pcmu'.padStart(9)}  ${'webrtc'.padStart(9)}  ${'ratio'.padStart(6)}`,
    ...rows.map(
      (r) =>
        `${r.what.padEnd(width)}  ${show(r.pcmu).padStart(9)}  ${show(r.webrtc).padStart(9)}  ${show(r.ratio).padStart(6)}`,
    ),
    'leg up: from asking the worker for the leg with the answer in hand (its ICE credentials, the ' +
      "peer's ufrag and fingerprint, DTLS role) to the leg's first RTP at the load process, through " +
      "ICE and DTLS for WebRTC; both wait for the leg's next 20 ms tick; worker µs per leg: open, " +
      'handshake, first packets and close',
  ];
}
