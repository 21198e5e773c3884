import type { Call } from './call.js';
import type { CallLeg, LegEnvironment } from './legs/call-leg.js';

/** Whether two legs settled on one codec and payload type: their packets go across undecoded. */
export function relayable(a: CallLeg, b: CallLeg): boolean {
  const [x, y] = [a.format, b.format];
  return (
    x !== null &&
    y !== null &&
    x.encoding === y.encoding &&
    x.rate === y.rate &&
    x.payloadType === y.payloadType
  );
}

/**
 * Whether a Dial relays two legs rather than mixes them: both settled on Opus at one rate
 * (browsers, SIP peers that offer it), payload types mapped by encoding as packets cross.
 * What either leg plays meanwhile is mixed with the relayed audio (MediaSession.relayTo), so
 * the bridge sounds as a mixed one does, without an Opus encode each way a frame and its loss.
 */
export function relaysOpus(a: CallLeg, b: CallLeg): boolean {
  const [x, y] = [a.format, b.format];
  return x?.encoding === 'opus' && y?.encoding === 'opus' && x.rate === y.rate;
}

/**
 * A called party's early media (RFC 3960: a 183 with SDP before the answer) on its way to the
 * caller: a caller not answered yet gets a 183 with the gateway's SDP, and the two legs are
 * bridged, so the far end's announcement or ringback is heard (and the caller's audio reaches
 * it, as an IVR that listens before it answers needs). One called leg at a time; the bridge is
 * taken down before the answer bridges the legs for good, or when that leg fails.
 */
export class EarlyMedia {
  private bridged: Promise<boolean> | null = null;
  private from: CallLeg | null = null;
  private stopping: Promise<void> = Promise.resolve();

  constructor(
    private readonly call: Call,
    private readonly legs: Pick<LegEnvironment, 'media' | 'log'>,
  ) {}

  /** The called leg whose early media the caller hears, null when none. */
  get leg(): CallLeg | null {
    return this.from;
  }

  /** Bridges the caller with `leg`; false when another leg's early media is already heard. */
  start(leg: CallLeg, mode: 'relay' | 'mix' = relayable(this.call.leg, leg) ? 'relay' : 'mix') {
    if (this.from !== null || this.call.over || leg.isOver) return false;
    this.from = leg;
    this.call.earlyMedia();
    this.bridged = this.legs.media
      .send({ type: 'bridge', sessionId: this.call.leg.uuid, peerId: leg.uuid, mode })
      .then(
        () => true,
        (error: Error) => {
          this.legs.log.warn(
            { err: error, callUuid: this.call.uuid, legUuid: leg.uuid },
            'early media not bridged',
          );
          return false;
        },
      );
    return true;
  }

  /**
   * Takes the bridge down, if there is one. Every call made while it is coming down waits for
   * the same unbridge, so a bridge sent after any of them finds the caller free.
   */
  stop(): Promise<void> {
    const bridged = this.bridged;
    this.bridged = null;
    this.from = null;
    if (bridged) this.stopping = this.unbridge(bridged);
    return this.stopping;
  }

  private async unbridge(bridged: Promise<boolean>): Promise<void> {
    if (!(await bridged) || this.call.leg.isOver) return;
    await this.legs.media
      .send({ type: 'unbridge', sessionId: this.call.leg.uuid })
      .catch(() => undefined);
  }
}
