import type { PacketProtection } from '../rtp/rtp-session.js';
import { SrtpContext, type SrtpDropReason } from './srtp-context.js';
import type { SrtpMasterKey, SrtpSuite } from './srtp-suite.js';

/**
 * The keys SDES (RFC 4568) settled for a leg: `inbound` is the peer's a=crypto key, which
 * unprotects what it sends; `outbound` is ours, which protects what we send.
 */
export interface SdesKeys {
  suite: SrtpSuite;
  inbound: SrtpMasterKey;
  outbound: SrtpMasterKey;
}

/**
 * `required`: nothing passes before the keys (a leg that offered or took RTP/SAVP);
 * `optional`: plain RTP passes until keys come (a re-INVITE may move it to RTP/SAVP).
 */
export type SdesMode = 'required' | 'optional';

/** Where SRTP drops are counted for the whole worker (its /metrics tally). */
export interface SrtpDropTally {
  srtp(reason: SrtpDropReason): void;
}

export interface SdesProtectionStats {
  keyed: boolean;
  suite: SrtpSuite | null;
  /** Packets unprotect refused since the leg opened, by reason. */
  srtpDropped: Record<SrtpDropReason, number>;
  /** Packets that came, or were to go, before the keys did on a leg that requires them. */
  unkeyed: number;
}

/**
 * A plain RTP leg's SRTP keyed by SDES: packets are unprotected as they enter the worker and
 * protected as they leave, on the leg's own RTP and RTCP ports, with symmetric RTP as for
 * plain legs. Each direction's context is made again only when its key changes (a re-INVITE
 * that keeps the keys keeps the rollover counters and replay windows).
 */
export class SdesProtection implements PacketProtection {
  private inbound: SrtpContext | null = null;
  private outbound: SrtpContext | null = null;
  private inboundKey: Buffer | null = null;
  private outboundKey: Buffer | null = null;
  private readonly dropped: Record<SrtpDropReason, number> = { auth: 0, replay: 0, malformed: 0 };
  private unkeyed = 0;

  constructor(
    private readonly mode: SdesMode,
    private readonly tally?: SrtpDropTally,
  ) {}

  /** New keys, or null to go back to plain RTP (only when SRTP is optional). */
  setKeys(keys: SdesKeys | null): void {
    if (keys === null) {
      if (this.mode === 'required') throw new Error('this leg requires SRTP: its keys stay');
      this.inbound = this.outbound = null;
      this.inboundKey = this.outboundKey = null;
      return;
    }
    const inbound = fingerprint(keys.suite, keys.inbound);
    if (this.inboundKey === null || !inbound.equals(this.inboundKey)) {
      this.inbound = new SrtpContext({ suite: keys.suite, ...keys.inbound, direction: 'inbound' });
      this.inboundKey = inbound;
    }
    const outbound = fingerprint(keys.suite, keys.outbound);
    if (this.outboundKey === null || !outbound.equals(this.outboundKey)) {
      this.outbound = new SrtpContext({
        suite: keys.suite,
        ...keys.outbound,
        direction: 'outbound',
      });
      this.outboundKey = outbound;
    }
  }

  get stats(): SdesProtectionStats {
    return {
      keyed: this.inbound !== null,
      suite: this.inbound?.suite ?? null,
      srtpDropped: { ...this.dropped },
      unkeyed: this.unkeyed,
    };
  }

  unprotectRtp(packet: Buffer): Buffer | null {
    if (this.inbound === null) return this.passPlain(packet);
    return this.counted(this.inbound.unprotectRtp(packet));
  }

  unprotectRtcp(packet: Buffer): Buffer | null {
    if (this.inbound === null) return this.passPlain(packet);
    return this.counted(this.inbound.unprotectRtcp(packet));
  }

  protectRtp(packet: Buffer): Buffer | null {
    if (this.outbound === null) return this.passPlain(packet);
    return this.outbound.protectRtp(packet);
  }

  protectRtcp(packet: Buffer): Buffer | null {
    if (this.outbound === null) return this.passPlain(packet);
    return this.outbound.protectRtcp(packet);
  }

  private passPlain(packet: Buffer): Buffer | null {
    if (this.mode === 'optional') return packet;
    this.unkeyed++;
    return null;
  }

  private counted(result: Buffer | SrtpDropReason): Buffer | null {
    if (typeof result !== 'string') return result;
    this.dropped[result]++;
    this.tally?.srtp(result);
    return null;
  }
}

/** The suite and key as one buffer, to tell a changed key from the same one sent again. */
function fingerprint(suite: SrtpSuite, key: SrtpMasterKey): Buffer {
  return Buffer.concat([Buffer.from(suite), key.masterKey, key.masterSalt]);
}
