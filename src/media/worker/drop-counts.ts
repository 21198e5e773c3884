import type { SrtpDropReason } from '../srtp/srtp-context.js';
import type { IceRejection } from '../webrtc/ice/index.js';
import type { WebrtcDropTally } from '../webrtc/webrtc-transport.js';

/** What a worker's WebRTC legs turned away since the last report, by reason. */
export interface DropSnapshot {
  srtp: Partial<Record<SrtpDropReason, number>>;
  ice: Partial<Record<IceRejection, number>>;
}

/**
 * A worker's WebRTC drops, counted as they happen and taken about once a second for the main
 * thread's /metrics (voxgate_srtp_dropped_total, voxgate_ice_rejected_total): a flood of
 * forged packets costs a counter each, not a message each.
 */
export class DropCounts implements WebrtcDropTally {
  private current: DropSnapshot = { srtp: {}, ice: {} };
  private any = false;

  srtp(reason: SrtpDropReason): void {
    this.current.srtp[reason] = (this.current.srtp[reason] ?? 0) + 1;
    this.any = true;
  }

  ice(reason: IceRejection): void {
    this.current.ice[reason] = (this.current.ice[reason] ?? 0) + 1;
    this.any = true;
  }

  get empty(): boolean {
    return !this.any;
  }

  /** The counts since the last take, which start again from zero. */
  take(): DropSnapshot {
    const taken = this.current;
    this.current = { srtp: {}, ice: {} };
    this.any = false;
    return taken;
  }
}
