import type { Scheduler } from '../../../core/scheduler.js';
import {
  attributeValue,
  bindingError,
  bindingSuccess,
  hasValidFingerprint,
  hasValidIntegrity,
  isComprehensionRequired,
  parseStunMessage,
  readUint32,
  STUN_ATTRIBUTE,
  STUN_METHOD_BINDING,
  StunParseError,
  UNDERSTOOD_IN_BINDING,
  type ReceivedStunMessage,
  type TransportAddress,
} from '../stun/index.js';
import { ConsentWatch } from './consent-watch.js';
import { checkIceCredentials, type IceCredentials } from './ice-credentials.js';

/** Why a datagram got no success response: the label of voxgate_ice_rejected_total{reason}. */
export type IceRejection =
  | 'malformed'
  | 'bad-fingerprint'
  | 'unsupported-method'
  | 'missing-credentials'
  | 'unknown-username'
  | 'bad-integrity'
  | 'unknown-attribute'
  | 'missing-priority'
  | 'role-conflict';

export interface ConsentLoss {
  /** How long the peer had been silent. */
  readonly silentMs: number;
  /** False when no check ever nominated a pair: the peer never connected. */
  readonly wasConnected: boolean;
}

/** How the agent reports upward; each method is optional. */
export interface IceLiteDelegate {
  /** The peer nominated a pair: media goes to `remote` from now on. */
  onSelected?(remote: TransportAddress): void;
  /** RFC 7675: no valid check for the consent timeout; the call should end. */
  onConsentLost?(loss: ConsentLoss): void;
  onRejected?(reason: IceRejection, from: TransportAddress): void;
}

export interface IceLiteAgentOptions {
  /** Ours, as written in our SDP. */
  readonly local: IceCredentials;
  /** The peer's ufrag from its SDP; null while unknown (our offer's answer not yet in). */
  readonly remoteUfrag?: string | null;
  readonly scheduler: Scheduler;
  /** Consent is lost after this long without a valid check; 30 s (RFC 7675 5.1) by default. */
  readonly consentTimeoutMs?: number;
  readonly delegate?: IceLiteDelegate;
}

export type IceLiteState = 'checking' | 'connected' | 'consent-lost' | 'closed';

export const DEFAULT_CONSENT_TIMEOUT_MS = 30_000;

/**
 * The lite side of ICE (RFC 8445 2.5) for one component with rtcp-mux: it never sends a check,
 * it answers the peer's, follows the peer's nomination, and watches consent. receive() takes a
 * datagram the demultiplexer found to be STUN and returns the response to send back to where
 * it came from, or null when nothing is to be sent.
 */
export class IceLiteAgent {
  private local: IceCredentials;
  private localKey: Buffer;
  private remoteUfrag: string | null;
  /**
   * The credentials before an ICE restart, still answered until the peer's first check with
   * the new ones: a peer goes on checking (consent, RFC 7675) with the old ones until the
   * answer that restarted reaches it.
   */
  private previous: { local: IceCredentials; key: Buffer; remoteUfrag: string | null } | null =
    null;
  private readonly delegate: IceLiteDelegate;
  private readonly consent: ConsentWatch;
  private currentState: IceLiteState = 'checking';
  private nominated: TransportAddress | null = null;
  private readonly rejections = new Map<IceRejection, number>();

  constructor(options: IceLiteAgentOptions) {
    checkIceCredentials(options.local, 'local');
    const timeout = options.consentTimeoutMs ?? DEFAULT_CONSENT_TIMEOUT_MS;
    if (!Number.isInteger(timeout) || timeout < 1) {
      throw new RangeError(
        `Expected a positive integer for consentTimeoutMs but received ${timeout}`,
      );
    }
    this.local = options.local;
    this.localKey = Buffer.from(options.local.pwd, 'utf8');
    this.remoteUfrag = options.remoteUfrag ?? null;
    this.delegate = options.delegate ?? {};
    this.consent = new ConsentWatch(options.scheduler, timeout, (silentMs) => this.lose(silentMs));
  }

  get state(): IceLiteState {
    return this.currentState;
  }

  /** Where media goes: the last nominated remote address, null before a nomination. */
  get selected(): TransportAddress | null {
    return this.nominated;
  }

  /** Datagrams turned down since the start, by reason. */
  get rejected(): ReadonlyMap<IceRejection, number> {
    return this.rejections;
  }

  /** Our ufrag now (it changes with an ICE restart). */
  get localUfrag(): string {
    return this.local.ufrag;
  }

  /**
   * The call is answered: the peer holds both descriptions and checks from now on, so one
   * that never connects is let go after the consent timeout. Before, its silence does not
   * count (a browser runs no ICE while it rings); a valid check starts the watch as well.
   */
  expectChecks(): void {
    if (this.currentState === 'checking' || this.currentState === 'connected') {
      this.consent.start();
    }
  }

  /** The peer's ufrag, once its SDP is in (the answer to our offer). */
  setRemoteUfrag(ufrag: string): void {
    this.remoteUfrag = ufrag;
  }

  /**
   * An ICE restart (RFC 8445 9): the peer's re-offer changed its credentials and our answer
   * carries new ones. The selected pair stays, and media with it, until the peer nominates a
   * pair checked with the new credentials (a new network, or the same); consent goes on
   * running, so a peer that never checks again is still let go. The old credentials are
   * answered until the first valid check with the new ones.
   */
  restart(local: IceCredentials, remoteUfrag: string): void {
    checkIceCredentials(local, 'local');
    if (this.currentState === 'consent-lost' || this.currentState === 'closed') return;
    if (local.ufrag === this.local.ufrag && local.pwd === this.local.pwd) {
      this.remoteUfrag = remoteUfrag;
      return;
    }
    this.previous = { local: this.local, key: this.localKey, remoteUfrag: this.remoteUfrag };
    this.local = local;
    this.localKey = Buffer.from(local.pwd, 'utf8');
    this.remoteUfrag = remoteUfrag;
  }

  receive(datagram: Buffer, from: TransportAddress): Buffer | null {
    if (this.currentState === 'consent-lost' || this.currentState === 'closed') return null;
    let message: ReceivedStunMessage;
    try {
      message = parseStunMessage(datagram);
    } catch (error) {
      if (!(error instanceof StunParseError)) throw error;
      return this.reject('malformed', from, null);
    }
    // RFC 8445 11: Binding indications are keepalives; the lite side sends no requests, so a
    // response is not for it. Neither is answered.
    if (message.messageClass !== 'request') return null;
    // RFC 8489 7.3: a message whose FINGERPRINT does not check out is not STUN; discard it.
    if (message.fingerprintAt !== null && !hasValidFingerprint(message)) {
      return this.reject('bad-fingerprint', from, null);
    }
    if (message.method !== STUN_METHOD_BINDING) {
      return this.reject('unsupported-method', from, bindingError(message, 400));
    }
    return this.answerCheck(message, from);
  }

  close(): void {
    this.consent.stop();
    this.currentState = 'closed';
  }

  private answerCheck(message: ReceivedStunMessage, from: TransportAddress): Buffer | null {
    const username = attributeValue(message, STUN_ATTRIBUTE.USERNAME)?.toString('utf8');
    // RFC 8489 9.1.3: a request without MESSAGE-INTEGRITY or USERNAME is answered 400.
    if (username === undefined || message.integrityAt === null) {
      return this.reject('missing-credentials', from, bindingError(message, 400));
    }
    // RFC 8445 7.3: the USERNAME of a check is "<our ufrag>:<the peer's ufrag>"; RFC 8489
    // 9.1.3: a username that is not valid is answered 401, without MESSAGE-INTEGRITY.
    const current = isUsernameOf(username, this.local.ufrag, this.remoteUfrag);
    const previous =
      !current &&
      this.previous !== null &&
      isUsernameOf(username, this.previous.local.ufrag, this.previous.remoteUfrag);
    if (!current && !previous) {
      return this.reject('unknown-username', from, bindingError(message, 401));
    }
    // RFC 8445 7.2.2: a check is signed with the password of the agent it goes to, ours; RFC
    // 8489 9.1.3: a wrong MESSAGE-INTEGRITY is answered 401.
    const key = current ? this.localKey : this.previous!.key;
    if (!hasValidIntegrity(message, key)) {
      return this.reject('bad-integrity', from, bindingError(message, 401));
    }
    // The peer checks with the credentials of the restart: it has our answer, the old ones go.
    if (current) this.previous = null;
    // RFC 8489 6.3.1: unknown comprehension-required attributes are answered 420.
    const unknown = message.attributes
      .map((attribute) => attribute.type)
      .filter((type) => isComprehensionRequired(type) && !UNDERSTOOD_IN_BINDING.has(type));
    if (unknown.length > 0) {
      return this.reject('unknown-attribute', from, bindingError(message, 420, { key, unknown }));
    }
    // RFC 8445 7.2.2: a check MUST carry PRIORITY.
    const priority = attributeValue(message, STUN_ATTRIBUTE.PRIORITY);
    if (priority === null || readUint32(priority) === null) {
      return this.reject('missing-priority', from, bindingError(message, 400, { key }));
    }
    // RFC 8445 6.1.1: a lite agent MUST always be controlled; a peer that also claims to be
    // controlled is told 487 (7.3.1.1), since the lite side cannot take the other role.
    if (attributeValue(message, STUN_ATTRIBUTE.ICE_CONTROLLED) !== null) {
      return this.reject('role-conflict', from, bindingError(message, 487, { key }));
    }
    this.accept(from, attributeValue(message, STUN_ATTRIBUTE.USE_CANDIDATE) !== null);
    return bindingSuccess(message, from, key);
  }

  /**
   * A valid check. RFC 7675: only checks on the selected pair keep consent once there is one.
   * RFC 8445 8.1.1 leaves nomination to the controlling agent: the lite side follows the last
   * pair the peer nominated, as a browser re-nominates after its network changes.
   */
  private accept(from: TransportAddress, useCandidate: boolean): void {
    const onSelected = this.nominated !== null && sameAddress(this.nominated, from);
    if (this.nominated === null || onSelected) this.consent.refresh();
    if (!useCandidate || onSelected) return;
    this.nominated = { address: from.address, port: from.port };
    this.consent.refresh();
    this.currentState = 'connected';
    this.delegate.onSelected?.(this.nominated);
  }

  private reject(reason: IceRejection, from: TransportAddress, response: Buffer | null) {
    this.rejections.set(reason, (this.rejections.get(reason) ?? 0) + 1);
    this.delegate.onRejected?.(reason, from);
    return response;
  }

  private lose(silentMs: number): void {
    if (this.currentState !== 'checking' && this.currentState !== 'connected') return;
    const wasConnected = this.nominated !== null;
    this.currentState = 'consent-lost';
    this.delegate.onConsentLost?.({ silentMs, wasConnected });
  }
}

/** RFC 8445 7.3: "<our ufrag>:<the peer's ufrag>", the peer's part unchecked while unknown. */
function isUsernameOf(username: string, ours: string, theirs: string | null): boolean {
  const colon = username.indexOf(':');
  if (colon < 0 || username.slice(0, colon) !== ours) return false;
  return theirs === null || username.slice(colon + 1) === theirs;
}

function sameAddress(a: TransportAddress, b: TransportAddress): boolean {
  return a.address === b.address && a.port === b.port;
}
