import { randomInt } from 'node:crypto';
import { answerStreams, type LocalAudio, type RejectedOffer } from './sdp-answerer.js';
import { readAnswerStreams, type RejectedAudio } from './answer-reading.js';
import {
  codecOf,
  codecPayload,
  DEFAULT_ANSWER_CODECS,
  DEFAULT_AUDIO_CODECS,
  DEFAULT_WEBRTC_CODECS,
  SUPPORTED_EVENTS,
  TELEPHONE_EVENT,
  TELEPHONE_EVENT_PAYLOAD_TYPES,
  type AudioCodec,
} from './audio-codecs.js';
import type { MediaDirection } from './media-direction.js';
import { DEFAULT_PTIME, type NegotiatedAudio } from './negotiated-audio.js';
import { SdpParseError } from './sdp-parse-error.js';
import { writeSessionDescription, type OutgoingOrigin, type OutgoingStream } from './sdp-writer.js';
import { parseSessionDescription, type SessionDescription } from './session-description.js';
import { hostCandidate } from './ice-candidate.js';
import type { DtlsFingerprint } from './transport-lines.js';
import { outgoingTransport, WEBRTC_PROFILE, type LocalTransport } from './webrtc-transport.js';
import { freshKeySalt, SDES_PROFILE, type SdesSuite } from './sdes-crypto.js';
import { offerCryptos, type LocalSdes } from './sdes-negotiation.js';

/** What makes a session a WebRTC one: voxgate's ICE credentials and DTLS fingerprint. */
export interface WebrtcSessionOptions {
  readonly ice: { readonly ufrag: string; readonly pwd: string };
  /** The hash of the DTLS certificate the media side will present. */
  readonly fingerprint: DtlsFingerprint;
  /**
   * New credentials for an ICE restart (RFC 8445 9) the peer asks for; without it a restart
   * is answered with the credentials the session has.
   */
  readonly freshIce?: () => { readonly ufrag: string; readonly pwd: string };
}

export interface SdpSessionOptions {
  /** Address put in o= and c= (VOXGATE_PUBLIC_HOST). */
  readonly address: string;
  /** The local RTP port. */
  readonly port: number;
  /**
   * Codecs in voxgate's order of preference, offered and accepted; by default PCMU and PCMA
   * are offered, and Opus is accepted too.
   */
  readonly codecs?: readonly AudioCodec[];
  /** Codecs accepted in an offer when they differ from `codecs` (G.711 alone: no Opus). */
  readonly answerCodecs?: readonly AudioCodec[];
  /** Offer and accept telephone-event (RFC 4733); true by default. */
  readonly telephoneEvent?: boolean;
  readonly ptime?: number;
  /** The o= sess-id; a random one by default. */
  readonly sessionId?: string;
  readonly username?: string;
  /**
   * Makes this a WebRTC leg's session (a browser over WS/WSS): offers and answers carry
   * UDP/TLS/RTP/SAVPF with ICE-lite, DTLS-SRTP, BUNDLE and rtcp-mux; the codecs then default
   * to opus, PCMU and PCMA. The address must then be an IP address: it is the host candidate.
   */
  readonly webrtc?: WebrtcSessionOptions;
  /**
   * SDES-SRTP (RFC 4568), for a peer reached over SIP over TLS: `required` offers RTP/SAVP
   * with a=crypto and refuses plain RTP; `optional` offers plain RTP/AVP but answers an
   * RTP/SAVP offer with SRTP. voxgate's keys are fresh for each session. Unset: plain RTP.
   */
  readonly sdes?: 'required' | 'optional';
}

export interface OfferOptions {
  /** sendrecv by default; sendonly puts the peer on hold (RFC 3264 8.4). */
  readonly direction?: MediaDirection;
  /** A new local RTP port, for a re-offer that moves the stream. */
  readonly port?: number;
  /** The codecs offered from now on, most preferred first (a carrier's own list). */
  readonly codecs?: readonly AudioCodec[];
}

export interface AcceptedOffer {
  readonly ok: true;
  /** The answer body to send. */
  readonly sdp: string;
  readonly offer: SessionDescription;
  readonly audio: NegotiatedAudio;
}

export type AnswerOutcome = AcceptedOffer | RejectedOffer;
export type AnswerReading = { readonly ok: true; readonly audio: NegotiatedAudio } | RejectedAudio;

/** The mid of voxgate's one audio stream in its own offers. */
const OFFER_MID = '0';
const FINGERPRINT_VALUE = /^(?:[0-9A-F]{2}:)*[0-9A-F]{2}$/;

function checkFingerprint(fingerprint: DtlsFingerprint): void {
  if (!/^[a-z0-9-]+$/.test(fingerprint.algorithm) || !FINGERPRINT_VALUE.test(fingerprint.value)) {
    throw new RangeError(
      `Expected a fingerprint such as sha-256 with colon-separated upper-case hex but received "${fingerprint.algorithm} ${fingerprint.value}"`,
    );
  }
}

function localTransport(options: WebrtcSessionOptions, address: string, port: number) {
  checkFingerprint(options.fingerprint);
  const transport: LocalTransport = {
    ice: options.ice,
    fingerprint: options.fingerprint,
    candidates: [hostCandidate(address, port)],
  };
  return transport;
}

/** voxgate's SDES keys for one session: one per suite, made when first written. */
function localSdes(required: boolean): LocalSdes {
  const keys = new Map<SdesSuite, Uint8Array>();
  return {
    required,
    keyFor: (suite) => {
      let key = keys.get(suite);
      if (key === undefined) keys.set(suite, (key = freshKeySalt()));
      return key;
    },
  };
}

function checkPort(port: number): void {
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new RangeError(`Expected an integer between 1 and 65535 for port but received ${port}`);
  }
}

/**
 * voxgate's side of the SDP of one SIP session: it makes offers and answers (RFC 3264) with one
 * o= line whose version grows by one with each body sent (RFC 3264 8), and keeps what was
 * negotiated last.
 */
export class SdpSession {
  private readonly origin: Omit<OutgoingOrigin, 'sessionVersion'>;
  private version: number;
  private local: LocalAudio;
  private pendingOffer: readonly OutgoingStream[] | null = null;
  private negotiated: NegotiatedAudio | null = null;
  private webrtc: WebrtcSessionOptions | null;

  constructor(options: SdpSessionOptions) {
    checkPort(options.port);
    const sessionId = options.sessionId ?? String(randomInt(1, 2 ** 47));
    if (!/^\d+$/.test(sessionId)) {
      throw new RangeError(`Expected digits for sessionId but received "${sessionId}"`);
    }
    this.origin = { username: options.username ?? 'voxgate', sessionId, address: options.address };
    this.version = Number(sessionId) % 1_000_000;
    this.webrtc = options.webrtc ?? null;
    const defaultCodecs = this.webrtc ? DEFAULT_WEBRTC_CODECS : DEFAULT_AUDIO_CODECS;
    this.local = {
      port: options.port,
      codecs: options.codecs ?? defaultCodecs,
      answerCodecs:
        options.answerCodecs ??
        options.codecs ??
        (this.webrtc ? DEFAULT_WEBRTC_CODECS : DEFAULT_ANSWER_CODECS),
      telephoneEvent: options.telephoneEvent ?? true,
      ptime: options.ptime ?? DEFAULT_PTIME,
      direction: 'sendrecv',
      ...(this.webrtc && {
        transport: localTransport(this.webrtc, options.address, options.port),
      }),
      ...(options.sdes && !this.webrtc && { sdes: localSdes(options.sdes === 'required') }),
    };
  }

  /** What the last completed offer/answer settled, null before the first. */
  get current(): NegotiatedAudio | null {
    return this.negotiated;
  }

  /** The version in the next o= line. */
  get nextVersion(): number {
    return this.version;
  }

  /** Makes an offer (or a re-offer, for hold, resume or a port change). */
  createOffer(options: OfferOptions = {}): string {
    if (options.port !== undefined) checkPort(options.port);
    const port = options.port ?? this.local.port;
    this.local = {
      ...this.local,
      port,
      ...(options.codecs && { codecs: options.codecs }),
      direction: options.direction ?? 'sendrecv',
      ...(this.webrtc && { transport: localTransport(this.webrtc, this.origin.address, port) }),
    };
    const payloads = this.local.codecs.map(codecPayload);
    if (this.local.telephoneEvent) {
      const rates = new Set(payloads.map((payload) => payload.clockRate));
      for (const [clockRate, payloadType] of TELEPHONE_EVENT_PAYLOAD_TYPES) {
        if (!rates.has(clockRate)) continue;
        const fmtp = `${SUPPORTED_EVENTS.first}-${SUPPORTED_EVENTS.last}`;
        payloads.push({ payloadType, encoding: TELEPHONE_EVENT, clockRate, channels: 1, fmtp });
      }
    }
    // RFC 4568 3.1.4 / RFC 3711: keys go with RTP/SAVP. An RTP/AVP offer with a=crypto is
    // not standard, so a leg where SRTP is only optional offers plain RTP.
    const sdes = this.local.sdes?.required ? this.local.sdes : undefined;
    const stream: OutgoingStream = {
      kind: 'audio',
      port: this.local.port,
      protocol: this.local.transport ? WEBRTC_PROFILE : sdes ? SDES_PROFILE : 'RTP/AVP',
      formats: payloads.map((payload) => String(payload.payloadType)),
      payloads,
      ptime: this.local.ptime,
      direction: this.local.direction,
      // RFC 8842 5.3: the offerer MUST use actpass.
      ...(this.local.transport && {
        mid: OFFER_MID,
        transport: outgoingTransport(this.local.transport, 'actpass'),
      }),
      ...(sdes && { crypto: offerCryptos(sdes) }),
    };
    this.pendingOffer = [stream];
    return this.write([stream], this.local.transport ? [OFFER_MID] : null);
  }

  /**
   * Reads the answer to the last offer. A rejected audio stream is a result, not an error;
   * a body that is not SDP, or breaks RFC 3264, throws an SdpParseError. An early answer
   * (a 183's SDP) leaves the offer open, so the 2xx's answer can still be read.
   */
  readAnswer(text: string, options: { early?: boolean } = {}): AnswerReading {
    if (this.pendingOffer === null) throw new SdpParseError('an answer came with no offer out');
    const reading = readAnswerStreams(this.pendingOffer, parseSessionDescription(text));
    if (!options.early) this.pendingOffer = null;
    if (reading.ok) this.negotiated = reading.audio;
    return reading;
  }

  /**
   * Answers an offer (an INVITE's or a re-INVITE's). When no audio codec matches the outcome
   * is a 488 to send; a body that is not SDP throws an SdpParseError (400).
   */
  answer(text: string, direction: MediaDirection = 'sendrecv'): AnswerOutcome {
    const offer = parseSessionDescription(text);
    // A re-offer keeps the codec in use while it still lists it.
    const inUse = this.negotiated ? codecOf(this.negotiated.codec) : null;
    // A WebRTC re-offer keeps the DTLS association, and voxgate's role in it, unless it comes
    // with another certificate: a new association is negotiated as a first one is.
    let dtlsRole = this.negotiated?.transport?.dtlsRole;
    const local = () => ({
      ...this.local,
      direction,
      ...(inUse !== null && { inUse }),
      ...(dtlsRole !== undefined && { dtlsRole }),
    });
    let outcome = answerStreams(offer, local());
    if (!outcome.ok) return outcome;
    if (dtlsRole !== undefined && this.changesCertificate(outcome.audio)) {
      dtlsRole = undefined;
      outcome = answerStreams(offer, local());
      if (!outcome.ok) return outcome;
    }
    if (this.restartsIce(outcome.audio)) {
      this.restartIce();
      outcome = answerStreams(offer, local());
      if (!outcome.ok) return outcome;
    }
    this.negotiated = outcome.audio;
    const sdp = this.write(outcome.streams, outcome.bundle);
    return { ok: true, sdp, offer, audio: outcome.audio };
  }

  /**
   * Whether a re-offer restarts ICE: its credentials are not the ones the peer gave before
   * (RFC 8445 9; RFC 8839 4.4.1.1.2 and JSEP, RFC 8829 5.3.1: the answer then carries new
   * ones too).
   */
  private restartsIce(audio: NegotiatedAudio): boolean {
    const before = this.negotiated?.transport?.remoteIce;
    const now = audio.transport?.remoteIce;
    return (
      before !== undefined &&
      now !== undefined &&
      (before.ufrag !== now.ufrag || before.pwd !== now.pwd)
    );
  }

  /** Whether a re-offer's fingerprints are not the ones the DTLS association in place has. */
  private changesCertificate(audio: NegotiatedAudio): boolean {
    const key = (transport: NegotiatedAudio['transport']) =>
      (transport?.remoteFingerprints ?? [])
        .map((f) => `${f.algorithm} ${f.value}`)
        .sort()
        .join('\n');
    return key(this.negotiated?.transport) !== key(audio.transport);
  }

  private restartIce(): void {
    if (this.webrtc?.freshIce === undefined) return;
    this.webrtc = { ...this.webrtc, ice: this.webrtc.freshIce() };
    this.local = {
      ...this.local,
      transport: localTransport(this.webrtc, this.origin.address, this.local.port),
    };
  }

  private write(streams: readonly OutgoingStream[], bundle: readonly string[] | null): string {
    const sdp = writeSessionDescription({
      origin: { ...this.origin, sessionVersion: this.version },
      address: this.origin.address,
      streams,
      bundle,
      iceLite: this.webrtc !== null,
    });
    // RFC 3264 8: each new SDP of the session carries the previous version plus one.
    this.version += 1;
    return sdp;
  }
}
