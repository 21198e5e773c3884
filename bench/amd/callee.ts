import type { RtpPeer } from '../../test/support/rtp-peer.js';

/**
 * A callee's line playing a clip: once the gateway's first RTP packet arrives (the call is
 * answered and its media flows), the clip goes out as PCMU, 160 bytes every 20 ms, until it
 * ends or stop() is called. Resolves with when the clip started (Date.now()), or null when the
 * gateway sent nothing within `waitMs`.
 */
export class ClipLine {
  private stopped = false;

  constructor(private readonly peer: RtpPeer) {}

  async play(ulaw: Buffer, waitMs = 10_000): Promise<number | null> {
    const deadline = Date.now() + waitMs;
    while (this.peer.received.length === 0) {
      if (this.stopped || Date.now() > deadline) return null;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const port = this.peer.received[0]!.from.port;
    const started = Date.now();
    void this.send(ulaw, port, started);
    return started;
  }

  stop(): void {
    this.stopped = true;
  }

  private async send(ulaw: Buffer, port: number, started: number): Promise<void> {
    const frames = Math.floor(ulaw.length / 160);
    for (let i = 0; i < frames && !this.stopped; i++) {
      const due = started + i * 20 - Date.now();
      if (due > 0) await new Promise((resolve) => setTimeout(resolve, due));
      if (this.stopped) return;
      this.peer.send(port, ulaw.subarray(i * 160, i * 160 + 160), {
        payloadType: 0,
        marker: i === 0,
      });
    }
  }
}
