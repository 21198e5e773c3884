import { randomHex } from '../../core/ids.js';
import type { Scheduler, TimerHandle } from '../../core/scheduler.js';
import { answerChallenge } from '../../sip/auth/challenge-answer.js';
import { locateSipServers, type SipDns } from '../../sip/dialog/server-locator.js';
import { formatUri, parseUri, type SipRequest, type SipResponse } from '../../sip/message/index.js';
import type {
  ClientTransaction,
  TransactionLayer,
} from '../../sip/transaction/transaction-layer.js';
import type { Destination, TransportLayer } from '../../sip/transport/transport-layer.js';
import { localContact } from '../../sip/ua/local-contact.js';
import { gatewayUri } from './carrier-routes.js';
import {
  grantedExpires,
  minExpires,
  registerRequest,
  retryAfter,
  type RegisterBinding,
} from './register-request.js';
import { gatewayName, type CarrierGateway, type SipCarrier } from './sip-carrier.js';

/** The first retry after a refusal; each further one waits twice as long, up to the cap. */
export const REGISTER_RETRY_MIN_MS = 2000;
export const REGISTER_RETRY_MAX_MS = 300_000;

type Log = {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
};

export interface CarrierRegistrationDeps {
  transactions: TransactionLayer;
  transport: TransportLayer;
  dns: SipDns;
  scheduler: Scheduler;
  /** How long the registrar has to answer one REGISTER (VOXGATE_CARRIER_RESPONSE_TIMEOUT). */
  answerWaitMs: number;
  log: Log;
  /** Told of each failed registration attempt (the failures counter). */
  onFailure?(carrier: string): void;
}

/** How one REGISTER exchange (its challenge answered) ended. */
type Exchange =
  | { kind: 'answer'; response: SipResponse }
  | { kind: 'refused'; status: number; reason: string; response?: SipResponse }
  | { kind: 'no-answer'; reason: string };

/**
 * One carrier's outbound registration (RFC 3261 10.2): REGISTER to the carrier's preferred
 * gateway at start, digest challenges answered with the carrier's credentials, a refresh at
 * half the time the registrar grants, retries with exponential backoff (or the registrar's
 * Retry-After) while it refuses, and Expires 0 when the gateway stops. Credentials never leave
 * the Authorization header: logs name the carrier, the registrar and the status only.
 */
export class CarrierRegistration {
  /** RFC 3261 10.2: one Call-ID for every REGISTER of this binding, and a rising CSeq. */
  private readonly callId = `${randomHex(16)}@voxgate`;
  private cseq = 0;
  private asked: number;
  private registeredUntil = 0;
  private failures = 0;
  private timer: TimerHandle | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  /** Why the carrier is not registered, for routing and doctor; null when it is. */
  private lastFailure: string = 'not registered yet';

  constructor(
    readonly carrier: SipCarrier,
    private readonly deps: CarrierRegistrationDeps,
  ) {
    if (!carrier.register) throw new Error(`carrier ${carrier.name} has no register settings`);
    this.asked = carrier.register.expires;
  }

  /** Whether the registrar holds our binding now (granted and not expired). */
  get registered(): boolean {
    return this.deps.scheduler.now() < this.registeredUntil;
  }

  /** Why the carrier is not registered (null when it is). */
  get notRegisteredReason(): string | null {
    return this.registered ? null : this.lastFailure;
  }

  /** The user part of our Contact: an INVITE to it is a call from this carrier. */
  get contactUser(): string {
    return registerUser(this.carrier);
  }

  start(): void {
    this.schedule(0);
  }

  /** Stops refreshing; RFC 3261 10.2.2: a binding still held is removed with Expires 0. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = null;
    await this.running;
    if (!this.registered) return;
    const outcome = await this.exchange(0).catch((error: Error) => ({
      kind: 'no-answer' as const,
      reason: error.message,
    }));
    this.registeredUntil = 0;
    const fields = { carrier: this.carrier.name };
    if (outcome.kind === 'answer' && outcome.response.status < 300)
      this.deps.log.info(fields, `carrier ${this.carrier.name} unregistered`);
    else this.deps.log.warn(fields, `carrier ${this.carrier.name} did not unregister`);
  }

  private schedule(ms: number): void {
    this.timer = this.deps.scheduler.after(ms, () => {
      this.timer = null;
      if (this.stopped) return;
      this.running = this.attempt().finally(() => (this.running = null));
    });
  }

  private async attempt(): Promise<void> {
    const outcome = await this.exchange(this.asked).catch((error: Error) => ({
      kind: 'no-answer' as const,
      reason: `cannot send REGISTER: ${error.message}`,
    }));
    if (outcome.kind === 'answer' && outcome.response.status < 300) {
      this.granted(outcome.response);
      return;
    }
    const failure: Exchange =
      outcome.kind === 'answer'
        ? {
            kind: 'refused',
            status: outcome.response.status,
            reason: `${outcome.response.status} ${outcome.response.reason}`,
            response: outcome.response,
          }
        : outcome;
    this.failed(failure);
  }

  private granted(response: SipResponse): void {
    const seconds = grantedExpires(response, this.binding().contact, this.asked);
    if (seconds <= 0) {
      this.failed({ kind: 'refused', status: 200, reason: 'the registrar granted 0 seconds' });
      return;
    }
    const was = this.registered;
    this.registeredUntil = this.deps.scheduler.now() + seconds * 1000;
    this.failures = 0;
    this.lastFailure = 'not registered yet';
    if (!was)
      this.deps.log.info(
        { carrier: this.carrier.name, registrar: this.registrarName(), expires: seconds },
        `carrier ${this.carrier.name} registered for ${seconds} s`,
      );
    if (!this.stopped) this.schedule((seconds * 1000) / 2);
  }

  private failed(failure: Exclude<Exchange, { kind: 'answer' }>): void {
    this.failures++;
    this.deps.onFailure?.(this.carrier.name);
    const status = failure.kind === 'refused' ? failure.status : null;
    // A definitive refusal ends the binding; silence or a 5xx leaves it until it expires.
    if (status !== null && status !== 408 && (status < 500 || status >= 600))
      this.registeredUntil = 0;
    const after = failure.kind === 'refused' && failure.response && retryAfter(failure.response);
    const backoff = Math.min(
      REGISTER_RETRY_MAX_MS,
      REGISTER_RETRY_MIN_MS * 2 ** Math.min(this.failures - 1, 20),
    );
    const delay = after ? Math.min(after * 1000, 3_600_000) : backoff;
    this.lastFailure = `registration failed: ${failure.reason}`;
    this.deps.log.warn(
      {
        carrier: this.carrier.name,
        registrar: this.registrarName(),
        status,
        attempt: this.failures,
        retryInS: delay / 1000,
      },
      `carrier ${this.carrier.name} registration failed (${failure.reason}); retrying in ${delay / 1000} s`,
    );
    if (!this.stopped) this.schedule(delay);
  }

  /**
   * One REGISTER asking for `expires`, its challenge answered once (RFC 3261 22.2); a second
   * challenge after our credentials means they were refused, unless it only says the nonce
   * was stale (RFC 7616 3.3), which is answered once more. A 423 raises the time asked to the
   * registrar's Min-Expires and asks again, once (RFC 3261 10.2.8).
   */
  private async exchange(expires: number): Promise<Exchange> {
    const destination = await this.locate();
    const binding = this.binding(destination);
    let request = registerRequest(binding, ++this.cseq, expires);
    let answered = 0;
    let staleAnswered = false;
    let raised = false;
    for (;;) {
      const outcome = await this.send(request, destination);
      if (outcome.kind !== 'answer') return outcome;
      const { response } = outcome;
      if (response.status === 401 || response.status === 407) {
        const refusal = this.challengeRefusal(response, request, answered, staleAnswered);
        if (typeof refusal === 'string')
          return { kind: 'refused', status: response.status, reason: refusal, response };
        staleAnswered ||= answered > 0;
        answered++;
        request = registerRequest(binding, ++this.cseq, expires);
        request.headers.set(refusal.header, refusal.value);
        continue;
      }
      const minimum = response.status === 423 ? minExpires(response) : null;
      if (minimum !== null && minimum > expires && expires > 0 && !raised) {
        // RFC 3261 10.2.8: "the UA MAY retry with an expiration interval ... equal to or
        // greater than the expiration interval within the Min-Expires header field".
        raised = true;
        expires = this.asked = minimum;
        answered = 0;
        request = registerRequest(binding, ++this.cseq, expires);
        continue;
      }
      return outcome;
    }
  }

  /** The answer to a challenge, or why it is not answered (a refusal). */
  private challengeRefusal(
    response: SipResponse,
    request: SipRequest,
    answered: number,
    staleAnswered: boolean,
  ) {
    const credentials = this.carrier.auth;
    if (!credentials)
      return `the registrar asks for credentials (${response.status}) and the carrier has none`;
    const answer = answerChallenge(response, request, credentials);
    if (answer === null)
      return `the registrar's challenge (${response.status}) cannot be answered (its realm, algorithm or qop)`;
    if (answered > 0 && (!answer.stale || staleAnswered))
      return `the registrar refused our credentials (${response.status}): check the carrier's username and password`;
    return answer;
  }

  /** One REGISTER transaction: its final response, or silence within the wait. */
  private send(request: SipRequest, destination: Destination): Promise<Exchange> {
    const waitMs = this.deps.answerWaitMs;
    return new Promise((resolve) => {
      let transaction: ClientTransaction | null = null;
      const timer = this.deps.scheduler.after(waitMs, () => {
        // Retransmissions of a REGISTER given up on would reach a registrar back up later
        // and confuse its answer to the next one.
        transaction?.abandon();
        resolve({ kind: 'no-answer', reason: `no answer to REGISTER in ${waitMs} ms` });
      });
      const done = (outcome: Exchange) => {
        timer.cancel();
        resolve(outcome);
      };
      try {
        transaction = this.deps.transactions.request(request, destination, {
          onResponse: (response) => {
            if (response.status >= 200) done({ kind: 'answer', response });
          },
          onTimeout: () => done({ kind: 'no-answer', reason: 'no answer to REGISTER' }),
          onTransportError: (error) =>
            done({ kind: 'no-answer', reason: `cannot reach the registrar: ${error.message}` }),
        });
      } catch (error) {
        done({ kind: 'no-answer', reason: `cannot send REGISTER: ${(error as Error).message}` });
      }
    });
  }

  private located: Destination | null = null;

  /** The first server RFC 3263 gives for the preferred gateway, looked up for each REGISTER. */
  private async locate(): Promise<Destination> {
    const [destination] = await locateSipServers(
      parseUri(gatewayUri(this.carrier, this.gateway())),
      this.deps.dns,
    );
    if (!destination) throw new Error(`${this.registrarName()} has no server`);
    this.located = destination;
    return destination;
  }

  private binding(destination: Destination | null = this.located): RegisterBinding {
    const gateway = this.gateway();
    const domain = this.carrier.register?.domain ?? gateway.host;
    const scheme = this.carrier.secure ? 'sips' : 'sip';
    const user = registerUser(this.carrier);
    return {
      registrar: this.carrier.register?.domain
        ? `${scheme}:${domain}`
        : gatewayUri(this.carrier, gateway),
      aor: formatUri({ scheme, user, host: domain.includes(':') ? `[${domain}]` : domain }),
      contact: localContact(this.deps.transport, destination?.protocol ?? 'UDP', user),
      callId: this.callId,
    };
  }

  /** The gateway registered with: the carrier's most preferred (lowest priority, then first). */
  private gateway(): CarrierGateway {
    return [...this.carrier.gateways].sort((a, b) => a.priority - b.priority)[0]!;
  }

  private registrarName(): string {
    return gatewayName(this.gateway());
  }
}

/** The AOR's user: register.user, else the digest username (carriers-file.ts checks one is). */
export function registerUser(carrier: SipCarrier): string {
  return carrier.register?.user ?? carrier.auth?.username ?? '';
}
