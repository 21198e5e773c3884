import type { Scheduler, TimerHandle } from '../../core/scheduler.js';
import {
  type NameAddr,
  type SipRequest,
  type SipResponse,
  isSipUri,
  parseNameAddr,
} from '../message/index.js';
import { responseTo } from '../transaction/response-to.js';
import type { ServerTransaction } from '../transaction/transaction-layer.js';
import type { Flow } from '../transport/flow.js';
import type { AddressOfRecord, Binding, RegistrarDirectory } from './registrar-directory.js';
import { RequestAuthenticator, type RequestAuthenticatorOptions } from './request-authenticator.js';
import type { UserAgentCore } from './user-agent-core.js';

export interface RegistrarOptions extends Omit<RequestAuthenticatorOptions, 'clock'> {
  directory: RegistrarDirectory;
  scheduler: Scheduler;
  /** This node's name, written into bindings over connections it holds. */
  node: string;
  /** Seconds (RFC 3261 10.3 step 7: 423 below it). Default 60. */
  minExpires?: number;
  /** Seconds; longer requests are shortened to it. Default 3600. */
  maxExpires?: number;
  /** Told when an AOR's bindings change. */
  onChange?: (aor: AddressOfRecord, bindings: Binding[]) => void;
  /** Told when expired bindings could not be removed (the store away); tried again later. */
  onExpiryFailed?: (aor: AddressOfRecord, error: Error) => void;
}

/** How long after a failed removal of expired bindings it is tried again (ms). */
const EXPIRY_RETRY_MS = 30_000;

const DEFAULT_EXPIRES = 3600;

/**
 * The registrar of RFC 3261 10.3: authenticates a REGISTER (digest against the endpoint's
 * HA1, or a bearer token on WebSocket), then adds, refreshes and removes its Contact
 * bindings, kept in the directory so that every node sees them. Bindings expire on a timer.
 */
export class Registrar {
  private readonly expiryTimers = new Map<string, TimerHandle>();
  /** The AORs bound over each connection this node holds, to unbind when it closes. */
  private readonly byConnection = new Map<string, Map<string, AddressOfRecord>>();
  private readonly minExpires: number;
  private readonly maxExpires: number;
  private readonly auth: RequestAuthenticator;
  private closed = false;

  constructor(
    core: UserAgentCore,
    private readonly options: RegistrarOptions,
  ) {
    this.minExpires = options.minExpires ?? 60;
    this.maxExpires = options.maxExpires ?? DEFAULT_EXPIRES;
    this.auth = new RequestAuthenticator({ ...options, clock: options.scheduler });
    core.handle('REGISTER', (request, transaction) => {
      this.register(request, transaction).catch((error: Error) => {
        if (!transaction.answered) transaction.respond(responseTo(request, 500));
        options.onRefused?.(`registrar failed: ${error.message}`, request);
      });
    });
  }

  /**
   * A connection closed: the contacts bound over it cannot be reached any more (RFC 5626
   * 5.2 treats a flow's failure the same way), so their bindings go.
   */
  async flowClosed(connectionId: string): Promise<void> {
    const aors = this.byConnection.get(connectionId);
    if (!aors) return;
    this.byConnection.delete(connectionId);
    for (const aor of aors.values()) {
      let changed = false;
      const live = await this.options.directory.update(aor, (bindings) => {
        const kept = bindings.filter(
          (b) => !(b.flow.connectionId === connectionId && b.flow.node === this.options.node),
        );
        changed = kept.length !== bindings.length;
        return changed ? kept : null;
      });
      if (!changed) continue;
      this.options.onChange?.(aor, live);
      this.scheduleExpiry(aor, live);
    }
  }

  /** Stops the expiry timers (the bindings stay in the directory). */
  close(): void {
    this.closed = true;
    for (const timer of this.expiryTimers.values()) timer.cancel();
    this.expiryTimers.clear();
  }

  private async register(request: SipRequest, transaction: ServerTransaction): Promise<void> {
    const answer = (response: SipResponse) => transaction.respond(response);
    // RFC 3261 10.3 step 5: the To header carries the address of record, a SIP or SIPS URI.
    const to = request.to().uri;
    if (!isSipUri(to) || !to.user) {
      answer(responseTo(request, 400, { reason: 'To is not a SIP address of record' }));
      return;
    }
    const auth = await this.auth.authenticate(request, transaction.flow, 'register', to.user);
    if (!auth.ok) {
      answer(auth.response);
      return;
    }
    const contacts = request.contact();
    // RFC 3327 5.3: the registrar stores the Path values with the bindings of this REGISTER.
    const path = request.headers.getAll('Path');
    if (!path.every(isRoutable)) {
      answer(responseTo(request, 400, { reason: 'Path is not a list of SIP URIs' }));
      return;
    }
    const now = this.options.scheduler.now();
    let result!: ReturnType<Registrar['apply']>;
    await this.options.directory.update(auth.aor, (stored) => {
      const current = stored.filter((b) => b.expiresAt > now);
      result = this.apply(request, { contacts, path }, current, transaction.flow, now, auth.aor);
      const expired = current.length !== stored.length;
      if ('response' in result) return expired ? current : null;
      return result.changed || expired ? result.bindings : null;
    });
    if ('response' in result) {
      answer(result.response);
      return;
    }
    if (result.changed) {
      this.track(auth.aor, result.bindings);
      this.options.onChange?.(auth.aor, result.bindings);
      this.scheduleExpiry(auth.aor, result.bindings);
    }
    answer(this.ok(request, result.bindings, path, now));
  }

  /** RFC 3261 10.3 steps 6 to 8, on the bindings that have not expired. */
  private apply(
    request: SipRequest,
    { contacts, path }: { contacts: NameAddr[] | '*'; path: string[] },
    current: Binding[],
    flow: Flow,
    now: number,
    aor: AddressOfRecord,
  ): { bindings: Binding[]; changed: boolean } | { response: SipResponse } {
    const headerExpires = request.expires();
    const callId = request.callId();
    const cseq = request.cseq().seq;
    if (contacts === '*') {
      // "*" is only allowed with Expires: 0, and alone (10.3 step 6).
      if (headerExpires !== 0) {
        return { response: responseTo(request, 400, { reason: 'Contact * needs Expires: 0' }) };
      }
      const stale = current.find((b) => b.callId === callId && b.cseq >= cseq);
      if (stale) return { response: responseTo(request, 500, { reason: 'Out of order REGISTER' }) };
      return { bindings: [], changed: current.length > 0 };
    }
    if (contacts.length === 0) return { bindings: current, changed: false };
    let bindings = [...current];
    const additions: Binding[] = [];
    for (const contact of contacts) {
      const requested = contactExpires(contact) ?? headerExpires ?? DEFAULT_EXPIRES;
      if (requested > 0 && requested < this.minExpires) {
        return {
          response: responseTo(request, 423, {
            headers: [['Min-Expires', String(this.minExpires)]],
          }),
        };
      }
      const uri = contact.uri.raw;
      const existing = bindings.find((b) => b.contact === uri);
      if (existing && existing.callId === callId && existing.cseq >= cseq) {
        return { response: responseTo(request, 500, { reason: 'Out of order REGISTER' }) };
      }
      bindings = bindings.filter((b) => b.contact !== uri);
      if (requested === 0) continue;
      additions.push({
        contact: uri,
        // A token's binding ends with the token: its client registers again with a new one.
        expiresAt: Math.min(
          now + Math.min(requested, this.maxExpires) * 1000,
          aor.notAfter ?? Infinity,
        ),
        callId,
        cseq,
        userAgent: request.headers.get('User-Agent') ?? null,
        path,
        flow: {
          protocol: flow.protocol,
          address: flow.remote.address,
          port: flow.remote.port,
          connectionId: flow.connectionId ?? null,
          node: this.options.node,
        },
      });
    }
    return { bindings: [...bindings, ...additions], changed: true };
  }

  /** RFC 3261 10.3 step 8: 200 with every current binding and its remaining time. */
  private ok(request: SipRequest, bindings: Binding[], path: string[], now: number): SipResponse {
    const headers: [string, string][] = bindings.map((b) => [
      'Contact',
      `<${b.contact}>;expires=${Math.max(0, Math.round((b.expiresAt - now) / 1000))}`,
    ]);
    headers.push(['Date', new Date(now).toUTCString()]);
    // RFC 3327 5.3: the registrar copies the Path values into the 200, but only to a UA that
    // said it supports path; to one that did not, they are stored and not returned.
    if (path.length > 0 && request.supported().includes('path')) {
      headers.push(['Path', path.join(', ')]);
    }
    return responseTo(request, 200, { headers });
  }

  private track(aor: AddressOfRecord, bindings: Binding[]): void {
    for (const binding of bindings) {
      const id = binding.flow.connectionId;
      if (id === null || binding.flow.node !== this.options.node) continue;
      let aors = this.byConnection.get(id);
      if (!aors) this.byConnection.set(id, (aors = new Map()));
      aors.set(aorTimerKey(aor), aor);
    }
  }

  private scheduleExpiry(aor: AddressOfRecord, bindings: Binding[]): void {
    const key = aorTimerKey(aor);
    this.expiryTimers.get(key)?.cancel();
    this.expiryTimers.delete(key);
    if (bindings.length === 0) return;
    const next = Math.min(...bindings.map((b) => b.expiresAt));
    this.expireIn(aor, key, next - this.options.scheduler.now());
  }

  /**
   * Removes the AOR's expired bindings in `delay` ms. When the store is away or busy, the
   * bindings are read with their expiry applied meanwhile, and the removal is tried again.
   */
  private expireIn(aor: AddressOfRecord, key: string, delay: number): void {
    if (this.closed) return;
    this.expiryTimers.set(
      key,
      this.options.scheduler.after(delay, () => {
        this.expiryTimers.delete(key);
        this.expire(aor).catch((error: Error) => {
          this.options.onExpiryFailed?.(aor, error);
          if (!this.expiryTimers.has(key)) this.expireIn(aor, key, EXPIRY_RETRY_MS);
        });
      }),
    );
  }

  /** Drops the bindings whose time has come (another node may have refreshed them). */
  private async expire(aor: AddressOfRecord): Promise<void> {
    const now = this.options.scheduler.now();
    let changed = false;
    const live = await this.options.directory.update(aor, (bindings) => {
      const kept = bindings.filter((b) => b.expiresAt > now);
      changed = kept.length !== bindings.length;
      return changed ? kept : null;
    });
    if (changed) this.options.onChange?.(aor, live);
    this.scheduleExpiry(aor, live);
  }
}

/** The expires parameter of a Contact (RFC 3261 10.2.1.1), in seconds. */
function contactExpires(contact: NameAddr): number | null {
  const value = contact.params.get('expires');
  if (value === undefined || value === null || !/^\d+$/.test(value)) return null;
  return Math.min(Number(value), 2 ** 32 - 1);
}

/** A Path value later requests can be routed through: a name-addr with a SIP or SIPS URI. */
function isRoutable(value: string): boolean {
  try {
    return isSipUri(parseNameAddr(value, 'Path').uri);
  } catch {
    return false;
  }
}

/**
 * An AOR's key in this registrar's maps. The subaccount is part of it: two accounts' tokens
 * may name the same subject, and each has bindings and an expiry of its own.
 */
const aorTimerKey = (aor: AddressOfRecord): string =>
  `${aor.account}|${aor.subaccount ?? ''}|${aor.kind}|${aor.id}`;
