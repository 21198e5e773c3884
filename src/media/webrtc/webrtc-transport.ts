import type { Scheduler } from '../../core/scheduler.js';
import type { DtlsContext } from '../dtls/dtls-context.js';
import { DtlsEndpoint } from '../dtls/dtls-endpoint.js';
import { usableFingerprints, type DtlsFingerprint } from '../dtls/dtls-fingerprint.js';
import type { DtlsRole, SrtpKeys, SrtpProfile } from '../dtls/srtp-keys.js';
import { SrtpContext, type SrtpDropReason } from '../srtp/srtp-context.js';
import type { SrtpSuite } from '../srtp/srtp-suite.js';
import { IceLiteAgent, type IceCredentials, type IceRejection } from './ice/index.js';
import type { TransportAddress } from './stun/index.js';

/** What the peer's SDP says of its transport; unknown until its offer or answer is in. */
export interface WebrtcPeer {
  /** Its a=ice-ufrag. */
  remoteUfrag: string | null;
  /** Its a=fingerprint values as text (`sha-256 AB:CD:...`). */
  remoteFingerprints: string[];
  /** Our DTLS role, from the a=setup exchange. */
  role: DtlsRole | null;
}

/**
 * What an offer/answer exchange after the first tells the transport: the peer's side, and our
 * ICE credentials as our SDP wrote them, which change when the peer restarted ICE.
 */
export interface WebrtcUpdate extends Partial<WebrtcPeer> {
  localIce?: IceCredentials;
  /**
   * The call is answered: the peer holds both descriptions and checks from now on. Until then
   * (or its first valid check) a peer that has not connected is not let go: a browser runs no
   * ICE while it rings, however long.
   */
  answered?: boolean;
}

/** A WebRTC leg's transport as a session spec carries it (a plain object, posted to workers). */
export interface WebrtcTransportSpec extends Partial<WebrtcPeer> {
  /** Ours, as written in our SDP. */
  localIce: IceCredentials;
  /** Consent is lost after this long without a valid check (RFC 7675: 30 s). */
  consentTimeoutMs?: number;
}

/** Why a WebRTC leg's transport ended; each ends the call. */
export type WebrtcFailure =
  | { kind: 'consent-lost'; message: string }
  | { kind: 'dtls-failed'; message: string }
  | { kind: 'dtls-closed'; message: string };

/** What the transport does not let through, counted for the whole worker (for /metrics). */
export interface WebrtcDropTally {
  srtp(reason: SrtpDropReason): void;
  ice(reason: IceRejection): void;
}

/** What the RTP session below gives: its socket and where plaintext packets go. */
export interface WebrtcLinks {
  send(datagram: Buffer, to: TransportAddress): void;
  rtp(packet: Buffer, from: TransportAddress): void;
  rtcp(packet: Buffer, from: TransportAddress): void;
}

/** What a worker gives its WebRTC legs. */
export interface WebrtcEnvironment {
  /** The worker's DTLS context, made from the process's certificate on first use. */
  context: () => DtlsContext;
  handshakeTimeoutMs?: number;
  /** Consent is lost after this long without a valid check, unless the leg's spec says. */
  consentTimeoutMs?: number;
  tally?: WebrtcDropTally;
}

export interface WebrtcTransportOptions {
  spec: WebrtcTransportSpec;
  /** Undefined in a worker without the process's certificate: the transport is refused. */
  environment: WebrtcEnvironment | undefined;
  scheduler: Scheduler;
  onFailed(failure: WebrtcFailure): void;
}

export interface WebrtcTransportStats {
  ice: IceLiteAgent['state'];
  dtls: DtlsEndpoint['state'] | 'waiting';
  srtpDropped: Record<SrtpDropReason, number>;
  /** SRTP or DTLS from elsewhere than the selected address, or SRTP before the keys. */
  unexpected: number;
}

/** DTLS datagrams kept while the peer's fingerprint, our role or the selected pair is unknown. */
const HELD_DTLS = 16;

const SUITE_OF_PROFILE: Readonly<Partial<Record<SrtpProfile, SrtpSuite>>> = {
  SRTP_AEAD_AES_128_GCM: 'AEAD_AES_128_GCM',
  SRTP_AES128_CM_SHA1_80: 'AES_CM_128_HMAC_SHA1_80',
  SRTP_AES128_CM_SHA1_32: 'AES_CM_128_HMAC_SHA1_32',
};

/**
 * One WebRTC leg's transport on its one port (rtcp-mux, BUNDLE of one): the ICE-lite agent,
 * the DTLS-SRTP endpoint once the peer's fingerprint and our role are known, and the SRTP
 * contexts once it connects. Datagrams are told apart by their first byte (RFC 7983): STUN to
 * the agent, DTLS to the endpoint, SRTP and SRTCP unprotected and handed up. Media goes only
 * to the address ICE selected, only once DTLS has given the keys.
 */
export class WebrtcTransport {
  private readonly agent: IceLiteAgent;
  private readonly peer: WebrtcPeer;
  private links: WebrtcLinks | null = null;
  private dtls: DtlsEndpoint | null = null;
  private inbound: SrtpContext | null = null;
  private outbound: SrtpContext | null = null;
  private held: { datagram: Buffer; from: TransportAddress }[] = [];
  private unexpected = 0;
  private over = false;
  private readonly environment: WebrtcEnvironment;

  constructor(private readonly options: WebrtcTransportOptions) {
    const { spec } = options;
    if (!options.environment) {
      throw new Error('this media worker has no DTLS certificate for WebRTC legs');
    }
    this.environment = options.environment;
    this.peer = {
      remoteUfrag: spec.remoteUfrag ?? null,
      remoteFingerprints: spec.remoteFingerprints ?? [],
      role: spec.role ?? null,
    };
    this.agent = new IceLiteAgent({
      local: spec.localIce,
      remoteUfrag: this.peer.remoteUfrag,
      scheduler: options.scheduler,
      ...consentTimeout(spec.consentTimeoutMs ?? options.environment.consentTimeoutMs),
      delegate: {
        onSelected: () => this.progress(),
        onRejected: (reason) => this.environment.tally?.ice(reason),
        onConsentLost: (loss) =>
          this.fail({
            kind: 'consent-lost',
            message: loss.wasConnected
              ? `ICE consent lost: no valid check for ${loss.silentMs} ms (RFC 7675)`
              : `ICE never connected: no check nominated a pair in ${loss.silentMs} ms`,
          }),
      },
    });
  }

  attach(links: WebrtcLinks): void {
    this.links = links;
  }

  /**
   * The peer's transport as its SDP gave it (our offer's answer, or a re-INVITE), with our
   * credentials when that exchange restarted ICE. The DTLS association and its SRTP keys
   * carry on over a restart (RFC 8842 5.4: the fingerprints and roles did not change). A
   * re-INVITE with other fingerprints comes from another certificate (a new peer connection,
   * a transfer to another endpoint): that needs a new association (RFC 8842), so the old one
   * is closed, media waits for the new keys, and the new handshake runs as the exchange says.
   */
  setPeer(peer: WebrtcUpdate): void {
    if (peer.remoteUfrag) {
      this.peer.remoteUfrag = peer.remoteUfrag;
      if (peer.localIce && peer.localIce.ufrag !== this.agent.localUfrag) {
        this.agent.restart(peer.localIce, peer.remoteUfrag);
      } else this.agent.setRemoteUfrag(peer.remoteUfrag);
    }
    if (
      this.dtls !== null &&
      peer.remoteFingerprints &&
      !sameTexts(peer.remoteFingerprints, this.peer.remoteFingerprints)
    ) {
      this.newAssociation();
    }
    if (peer.remoteFingerprints && this.dtls === null)
      this.peer.remoteFingerprints = [...peer.remoteFingerprints];
    if (peer.role && this.dtls === null) this.peer.role = peer.role;
    if (peer.answered) this.agent.expectChecks();
    this.progress();
  }

  /** Where media goes: the selected address, once SRTP is keyed. */
  get destination(): TransportAddress | undefined {
    return this.outbound === null ? undefined : (this.agent.selected ?? undefined);
  }

  get stats(): WebrtcTransportStats {
    return {
      ice: this.agent.state,
      dtls: this.dtls?.state ?? 'waiting',
      srtpDropped: { ...(this.inbound?.dropped ?? { auth: 0, replay: 0, malformed: 0 }) },
      unexpected: this.unexpected,
    };
  }

  /** RFC 7983 9: the first byte tells STUN (0-3), DTLS (20-63) and RTP or RTCP (128-191). */
  receive(datagram: Buffer, from: TransportAddress): void {
    if (this.over) return;
    const first = datagram[0]!;
    if (first >= 128 && first <= 191) this.receiveSrtp(datagram, from);
    else if (first <= 3) this.receiveStun(datagram, from);
    else if (first >= 20 && first <= 63) this.receiveDtls(datagram, from);
    else this.unexpected++;
  }

  protectRtp(packet: Buffer): Buffer {
    return this.outbound!.protectRtp(packet);
  }

  protectRtcp(packet: Buffer): Buffer {
    return this.outbound!.protectRtcp(packet);
  }

  /** Sends close_notify when connected, and stops the consent watch. */
  close(): void {
    if (this.over) return;
    this.over = true;
    this.agent.close();
    this.dtls?.close();
    this.held = [];
  }

  private receiveSrtp(datagram: Buffer, from: TransportAddress): void {
    const inbound = this.inbound;
    if (inbound === null || !isSelected(this.agent.selected, from)) {
      this.unexpected++;
      return;
    }
    // RFC 5761 4: with RTCP on the RTP port, a second byte of 192-223 (a payload type of
    // 64-95 once the marker bit is masked) is RTCP.
    const type = datagram.length > 1 ? datagram[1]! & 0x7f : 0;
    const rtcp = type >= 64 && type <= 95;
    const plain = rtcp ? inbound.unprotectRtcp(datagram) : inbound.unprotectRtp(datagram);
    if (typeof plain === 'string') {
      this.environment.tally?.srtp(plain);
      return;
    }
    if (rtcp) this.links?.rtcp(plain, from);
    else this.links?.rtp(plain, from);
  }

  private receiveStun(datagram: Buffer, from: TransportAddress): void {
    const response = this.agent.receive(datagram, from);
    if (response !== null) this.links?.send(response, from);
  }

  private receiveDtls(datagram: Buffer, from: TransportAddress): void {
    const selected = this.agent.selected;
    if (this.dtls === null || selected === null) {
      // A ClientHello may come before the answer reaches us or the peer's nomination does.
      if (this.held.length < HELD_DTLS) this.held.push({ datagram: Buffer.from(datagram), from });
      return;
    }
    if (!isSelected(selected, from)) {
      this.unexpected++;
      return;
    }
    this.dtls.feed(datagram);
  }

  /** Starts DTLS once the peer's fingerprint, our role and a selected pair are all known. */
  private progress(): void {
    if (this.over) return;
    const { role, remoteFingerprints } = this.peer;
    if (this.dtls === null && role !== null && remoteFingerprints.length > 0) {
      // Whatever the peer's SDP said, the leg fails with the reason: this runs on a datagram
      // (the peer's nomination) as well as on an update, and must not throw from either.
      try {
        this.dtls = this.endpoint(role, usableFingerprints(remoteFingerprints));
      } catch (error) {
        this.fail({
          kind: 'dtls-failed',
          message: `DTLS cannot start: ${(error as Error).message}`,
        });
        return;
      }
    }
    const selected = this.agent.selected;
    if (this.dtls === null || selected === null) return;
    // A client sends its ClientHello; a server's handshake deadline runs from here as well,
    // so a peer that waits as a server too (an answer that got the roles wrong) is let go
    // within the handshake timeout rather than at the media timeout.
    this.dtls.start();
    const held = this.held;
    this.held = [];
    for (const { datagram, from } of held) {
      if (isSelected(selected, from)) this.dtls.feed(datagram);
    }
  }

  private endpoint(role: DtlsRole, fingerprints: readonly DtlsFingerprint[]): DtlsEndpoint {
    return new DtlsEndpoint({
      context: this.environment.context(),
      role,
      remoteFingerprints: fingerprints,
      scheduler: this.options.scheduler,
      ...(this.environment.handshakeTimeoutMs === undefined
        ? {}
        : { handshakeTimeoutMs: this.environment.handshakeTimeoutMs }),
      listener: {
        send: (datagram) => {
          const to = this.agent.selected;
          if (to !== null) this.links?.send(datagram, to);
        },
        onConnected: (keys) => this.keyed(keys),
        onFailed: (failure) =>
          this.fail({
            kind: 'dtls-failed',
            message: `DTLS handshake failed (${failure.kind}): ${failure.reason}`,
          }),
        onClosed: (reason) =>
          this.fail({ kind: 'dtls-closed', message: `the peer closed DTLS (${reason})` }),
      },
    });
  }

  /** Closes the association in place (close_notify) and its SRTP: nothing goes until rekeyed. */
  private newAssociation(): void {
    this.dtls?.close();
    this.dtls = null;
    this.inbound = null;
    this.outbound = null;
  }

  private keyed(keys: SrtpKeys): void {
    const suite = SUITE_OF_PROFILE[keys.profile];
    if (suite === undefined) {
      this.fail({ kind: 'dtls-failed', message: `no SRTP suite for profile ${keys.profile}` });
      return;
    }
    this.inbound = new SrtpContext({
      suite,
      masterKey: keys.remoteMasterKey,
      masterSalt: keys.remoteMasterSalt,
      direction: 'inbound',
    });
    this.outbound = new SrtpContext({
      suite,
      masterKey: keys.localMasterKey,
      masterSalt: keys.localMasterSalt,
      direction: 'outbound',
    });
  }

  private fail(failure: WebrtcFailure): void {
    if (this.over) return;
    this.over = true;
    this.agent.close();
    // RFC 7675 5.1: without consent, sending stops; a failed endpoint has freed itself.
    this.dtls?.close();
    this.outbound = null;
    this.options.onFailed(failure);
  }
}

/** Whether two lists of fingerprints hold the same values, in any order and case. */
function sameTexts(a: readonly string[], b: readonly string[]): boolean {
  const key = (list: readonly string[]) =>
    list
      .map((text) => text.trim().toUpperCase())
      .sort()
      .join('\n');
  return key(a) === key(b);
}

function isSelected(selected: TransportAddress | null, from: TransportAddress): boolean {
  return selected !== null && selected.address === from.address && selected.port === from.port;
}

const consentTimeout = (ms: number | undefined) =>
  ms === undefined ? {} : { consentTimeoutMs: ms };
