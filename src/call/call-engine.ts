import { randomUUID } from 'node:crypto';
import { invalidParameter, notFound } from '../core/errors.js';
import type { IncomingInvite } from '../sip/ua/incoming-invite.js';
import { Call, type CallAccount, type CallServices } from './call.js';
import type { CallLauncher, CallOwner } from './call-launcher.js';
import { hangupCause } from './hangup-causes.js';
import type { LegEnvironment } from './legs/call-leg.js';
import { InboundLeg } from './legs/inbound-leg.js';
import { OutboundLeg, type AttemptPlan, type RoutedTarget } from './legs/outbound-leg.js';
import type { CarrierDialling } from './carriers/carrier-dialling.js';
import { outboundSipHeaders } from './client-sip-headers.js';
import { type Destination, type OutboundCallRequest } from './outbound-request.js';
import { connectToEndpoint, runDial, type DialDeps } from './dial.js';
import { ConferenceRooms } from './conferences/conference-rooms.js';
import { connectionOfContact, resolveSipTarget, type TargetContext } from './endpoint-target.js';
import type { InboundCarrierMode } from './incoming-carriers.js';
import { routeInbound } from './inbound-routing.js';
import { relayToTrunk, type TrunkDeps } from './trunks/trunk-relay.js';
import { machineDetectionOf } from './machine-detection.js';
import type { LegEnd } from './legs/leg-end.js';
import { describeHit } from '../limits/account-limiter.js';

export interface CallEngineOptions {
  services: CallServices;
  legs: LegEnvironment;
  /**
   * How calls to phone numbers go out through the carriers (VOXGATE_CARRIERS_FILE or
   * VOXGATE_CARRIER_URI); null when none is configured.
   */
  carriers: CarrierDialling | null;
  /** Whether calls to numbers must come from their IncomingCarrier (VOXGATE_INBOUND_CARRIERS). */
  inboundCarriers?: InboundCarrierMode;
  /** The carrier registered with a Contact user: calls to it name the number in To. */
  registeredContact?: (user: string) => string | null;
  /** How calls to numbers on inbound trunks reach the trunks' origination URIs. */
  trunks: Omit<TrunkDeps, 'services' | 'legs'>;
}

/** Seconds a draining node asks callers (the proxy) to wait before trying it again. */
export const DRAIN_RETRY_AFTER_S = 300;

/** A live call as the API lists it. */
export interface LiveCall {
  call: Call;
  owner: CallAccount;
}

/**
 * The calls of this node: places outbound calls (one per destination of a request), takes
 * inbound ones from the SIP stack, and keeps the live ones, which LiveControl acts on for
 * clients. Calls are independent: one that fails leaves the others of its request untouched.
 */
export class CallEngine implements CallLauncher {
  private readonly live = new Map<string, LiveCall>();
  /** The conference rooms of this node (answer XML's Conference, the Conference API). */
  readonly conferences: ConferenceRooms;
  private readonly requests = new Map<string, Set<string>>();
  private closing = false;
  private draining = false;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: CallEngineOptions) {
    options.legs.sip.incoming.onInvite = (invite) => this.incoming(invite);
    const { media, scheduler } = options.legs;
    this.conferences = new ConferenceRooms({
      media,
      scheduler,
      log: options.services.log,
      ...(options.services.recordings && { recordings: options.services.recordings }),
    });
  }

  async fire(
    owner: CallOwner,
    request: OutboundCallRequest,
    sourceIp: string,
  ): Promise<{ requestUuid: string }> {
    this.refuseUncarriedNumbers(request);
    if (request.parentCallUuid && request.errorIfParentNotFound) {
      await this.expectParent(owner, request.parentCallUuid, request.parentAuthId);
    }
    const requestUuid = randomUUID();
    const account = accountOf(owner);
    const uuids = new Set<string>();
    this.requests.set(requestUuid, uuids);
    for (const destination of request.to) {
      const uuid = randomUUID();
      uuids.add(uuid);
      this.placeCall(uuid, requestUuid, account, request, destination, sourceIp);
    }
    return { requestUuid };
  }

  /**
   * A phone number is reached through a carrier (VOXGATE_CARRIER_URI or a carriers file), the one route to
   * numbers there is (trunks carry inbound calls only): without it such a call could only end
   * 5020 Routing Error, so the request is refused before any call of it is placed. SIP URIs
   * (endpoints, SIP addresses) need no carrier.
   */
  private refuseUncarriedNumbers(request: OutboundCallRequest): void {
    if (this.options.carriers) return;
    const number = request.to.find((destination) => destination.kind === 'number');
    if (number)
      throw invalidParameter(
        `to: ${number.number} is a phone number and no carrier is configured: set ` +
          'VOXGATE_CARRIER_URI to the SIP URI calls to phone numbers go to (SIP URIs need none)',
      );
  }

  /**
   * error_if_parent_not_found: the parent must be a call this account sees, live or recorded;
   * with parent_auth_id naming its main account, a subaccount may also name a call of the main
   * account itself (never one of its sibling subaccounts'). Anything else is as not found.
   */
  private async expectParent(
    owner: CallOwner,
    uuid: string,
    parentAuthId: string | null,
  ): Promise<void> {
    const live = this.live.get(uuid);
    const record = live ? null : await this.options.services.state.calls.get(owner.tenant, uuid);
    const holder: { account: string; subaccount: string | null } | null = live?.owner ?? record;
    if (holder && holder.account === owner.tenant) {
      if (owner.isMain || holder.subaccount === owner.authId) return;
      if (parentAuthId === owner.tenant && holder.subaccount === null) return;
    }
    throw notFound(`parent call ${uuid}`);
  }

  /** How many calls this node runs (queued ones included). */
  get liveCount(): number {
    return this.live.size;
  }

  /** Whether this node runs the call of that uuid, whoever owns it. */
  runs(uuid: string): boolean {
    return this.live.has(uuid);
  }

  /** From now on a new INVITE is answered 503 with Retry-After: the proxy tries another node. */
  drain(): void {
    this.draining = true;
  }

  /** Resolves once this node runs no call. */
  idle(): Promise<void> {
    if (this.live.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** The live calls an account sees (a main account sees its subaccounts' too). */
  liveCalls(viewer: CallOwner): LiveCall[] {
    return [...this.live.values()].filter((entry) => visible(viewer, entry.owner));
  }

  find(viewer: CallOwner, uuid: string): LiveCall | null {
    const entry = this.live.get(uuid);
    return entry && visible(viewer, entry.owner) ? entry : null;
  }

  /** Calls of a request not yet dialled (Call/?status=queued). */
  queuedCalls(viewer: CallOwner): LiveCall[] {
    return this.liveCalls(viewer).filter((entry) => !entry.call.dialled);
  }

  /** The live calls of a request that the viewer sees. */
  callsOfRequest(viewer: CallOwner, requestUuid: string): LiveCall[] {
    return [...(this.requests.get(requestUuid) ?? [])]
      .map((uuid) => this.find(viewer, uuid))
      .filter((entry) => entry !== null);
  }

  /**
   * Hangs up every call and waits for their records (shutdown), then at most `graceMs` for the
   * peers to answer: a peer that vanished would hold a BYE or CANCEL for 64*T1 (RFC 3261
   * 17.1.2.2, Timer F), and shutdown must not wait on peers. A leg whose CANCEL is still
   * unanswered after `graceMs` ends then, so its record is written all the same.
   */
  async close(graceMs: number): Promise<void> {
    this.closing = true;
    const calls = [...this.live.values()].map((entry) => entry.call);
    const end: LegEnd = {
      cause: hangupCause('Normal Hangup'),
      source: 'Service',
      status: 'completed',
    };
    const hangups = Promise.all(calls.map((call) => call.hangup(end)));
    const recorded = Promise.all(calls.map((call) => call.finished));
    if ((await this.within(graceMs, recorded)) === 'late') {
      for (const call of calls) call.abandon(end);
      await recorded;
    }
    await this.within(graceMs, hangups);
  }

  /** Waits for `work`, or `ms` at most. */
  private async within(ms: number, work: Promise<unknown>): Promise<'done' | 'late'> {
    let timer: { cancel(): void } | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = this.options.services.scheduler.after(ms, () => resolve('late'));
    });
    try {
      return await Promise.race([work.then(() => 'done' as const), late]);
    } finally {
      timer?.cancel();
    }
  }

  private placeCall(
    uuid: string,
    requestUuid: string,
    owner: CallAccount,
    request: OutboundCallRequest,
    destination: Destination,
    sourceIp: string,
  ): void {
    const { legs, services } = this.options;
    const to = destination.kind === 'number' ? destination.number : destination.uri;
    const plan =
      destination.kind === 'number'
        ? this.numberPlan(uuid, destination.number, request.from)
        : null;
    // Voice document: sip_headers are prefixed X-PH-; "when the originating leg uses SIP
    // authentication they are forwarded without the prefix".
    const headers = outboundSipHeaders(request.sipHeaders, {
      prefixed: request.sipAuth === null,
    }).map((h) => [h.name, h.value] as [string, string]);
    const leg = OutboundLeg.dial(legs, {
      uuid,
      target: destination.kind === 'sip' ? destination.uri : `sip:${to.replace(/^\+/, '')}@invalid`,
      ...(destination.kind === 'sip'
        ? { resolve: () => this.sipTarget(destination.uri, owner) }
        : {}),
      ...(plan && { plan }),
      from: `sip:${request.from}@${legs.publicHost}`,
      fromDisplayName: request.callerName ?? undefined,
      headers,
      credentials: request.sipAuth
        ? { username: request.sipAuth.username, password: request.sipAuth.password }
        : undefined,
      ringTimeoutSeconds: request.ringTimeout ?? undefined,
      ...(services.limits ? { admission: () => this.admitOutbound(uuid, owner) } : {}),
    });
    const call = new Call(services, {
      uuid,
      requestUuid,
      leg,
      from: request.from,
      to,
      callerName: request.callerName,
      owner,
      sourceIp,
      callType: request.callType,
      parentCallUuid: request.parentCallUuid,
      timeLimit: request.timeLimit,
      hangupOnRing: request.hangupOnRing,
      machineDetection: machineDetectionOf(request),
      sendDigits: request.sendDigits
        ? { digits: request.sendDigits, onPreanswer: request.sendOnPreanswer }
        : null,
      urls: {
        answer: {
          url: request.answerUrl,
          method: request.answerMethod,
          fallback: request.fallbackUrl
            ? { url: request.fallbackUrl, method: request.fallbackMethod }
            : null,
        },
        ring: request.ringUrl ? { url: request.ringUrl, method: request.ringMethod } : null,
        hangup: request.hangupUrl ? { url: request.hangupUrl, method: request.hangupMethod } : null,
      },
    });
    this.track(call, owner, requestUuid);
    if (destination.kind === 'number' && plan === null) {
      void leg.hangup({
        cause: hangupCause('Routing Error'),
        source: 'Service',
        status: 'failed',
        reason: 'no carrier for a phone number (VOXGATE_CARRIER_URI)',
      });
    }
  }

  /**
   * An outbound call under its account's limits: it waits (queued) for a place within the calls
   * per second, then counts as running unless the concurrent calls are all taken (5030).
   */
  private async admitOutbound(uuid: string, owner: CallAccount): Promise<LegEnd | null> {
    const limits = this.options.services.limits!;
    await limits.wait('calls_per_second', owner);
    const hit = await limits.admit('calls', owner, uuid);
    if (!hit) return null;
    this.options.services.log.info({ callUuid: uuid, limit: hit.name }, describeHit(hit));
    return {
      cause: hangupCause('Concurrency Limit Breached'),
      source: 'Service',
      status: 'failed',
    };
  }

  /**
   * A SIP URI's target: a registered endpoint's contact and flow, or the URI itself. A client
   * held by a connection of this node comes with how to find its connection again later.
   */
  sipTarget(uri: string, owner: CallAccount): Promise<RoutedTarget | null> {
    const context = this.targetContext(owner);
    return resolveSipTarget(uri, context).then((resolved) => {
      if (resolved.kind === 'elsewhere') {
        // Failed as an endpoint with no registration: this node holds no flow to it.
        this.options.services.log.warn(
          { node: resolved.node, protocol: resolved.protocol },
          `${uri} is registered over a ${resolved.protocol} connection held by node ` +
            `${resolved.node}, which only that node can send on: the call to it fails here`,
        );
        return null;
      }
      return resolved.kind === 'unregistered'
        ? null
        : {
            target: resolved.target,
            destination: resolved.destination,
            routeSet: resolved.routeSet,
            ...(resolved.webrtc && { webrtc: true }),
            ...(resolved.srtp && { srtp: resolved.srtp }),
            ...(resolved.others && { others: resolved.others }),
            ...(resolved.otherKind && { otherKind: resolved.otherKind }),
            reach: (contact: string) => connectionOfContact(uri, contact, context),
          };
    });
  }

  /** How the users of `owner` registered are found. */
  private targetContext(owner: CallAccount): TargetContext {
    this.listening ??= this.sipListening();
    return {
      state: this.options.services.state,
      scheduler: this.options.services.scheduler,
      domains: [this.options.legs.publicHost.toLowerCase()],
      listening: this.listening,
      node: this.options.legs.sip.node,
      owner,
    };
  }

  /** The hosts and ports of the SIP listeners, read once they listen (the first call's). */
  private listening: TargetContext['listening'] = undefined;

  private sipListening(): TargetContext['listening'] {
    try {
      const listeners = Object.values(this.options.legs.sip.addresses).filter((l) => l !== null);
      return {
        addresses: listeners.map((l) => l.address),
        ports: listeners.map((l) => l.port),
      };
    } catch {
      // Not listening (yet): only the public host names this gateway.
      return undefined;
    }
  }

  /** How a leg reaches a phone number: its carriers' gateways in turn; null without carriers. */
  private numberPlan(
    uuid: string,
    number: string,
    caller: string,
  ): (() => Promise<AttemptPlan>) | null {
    const carriers = this.options.carriers;
    return carriers ? () => carriers.plan(uuid, number, caller) : null;
  }

  private incoming(invite: IncomingInvite): void {
    if (this.closing || this.draining) {
      // RFC 3261 21.5.4: Retry-After tells the proxy when to try this node again.
      invite.reject(503, this.draining ? 'Draining' : 'Shutting down', [
        ['Retry-After', String(DRAIN_RETRY_AFTER_S)],
      ]);
      return;
    }
    const uuid = randomUUID();
    const leg = new InboundLeg(this.options.legs, uuid, invite);
    void this.admit(leg, invite).catch((error: Error) => {
      this.options.services.log.warn({ err: error, callUuid: uuid }, 'inbound call failed');
      void leg.hangup({
        cause: hangupCause('Internal Error'),
        source: 'Error',
        status: 'failed',
        reason: `the inbound call failed: ${error.message}`,
      });
    });
  }

  private async admit(leg: InboundLeg, invite: IncomingInvite): Promise<void> {
    const route = await routeInbound(
      {
        state: this.options.services.state,
        callers: this.options.legs.sip.callers,
        inboundCarriers: this.options.inboundCarriers ?? 'enforce',
        ...(this.options.registeredContact && {
          registeredContact: this.options.registeredContact,
        }),
      },
      invite,
    );
    if (route.kind === 'refuse' || route.kind === 'respond') {
      // The caller may have cancelled while the route was looked up: nothing to answer then.
      if (invite.state !== 'received' && invite.state !== 'early') return;
      if (route.kind === 'respond') {
        const { response } = route;
        const headers = ['WWW-Authenticate', 'Proxy-Authenticate'].flatMap((name) =>
          response.headers.getRows(name).map((value) => [name, value] as [string, string]),
        );
        invite.reject(response.status, response.reason, headers);
      } else {
        if (route.warning)
          this.options.services.log.warn(route.warning.fields, route.warning.message);
        invite.reject(route.status, route.reason);
      }
      return;
    }
    // A call to an endpoint's SIP URI or to a trunk runs no application: it is relayed.
    const urls = route.kind === 'app' ? route.urls : { answer: { xml: '<Response/>' } };
    // The call exists before its media opens, so a CANCEL from here on still ends it with a
    // record and a hangup callback.
    const call = new Call(this.options.services, {
      uuid: leg.uuid,
      requestUuid: null,
      leg,
      from: route.from,
      to: route.to,
      callerName: route.callerName,
      owner: route.owner,
      sourceIp: invite.remote.address,
      urls,
    });
    this.track(call, route.owner, null);
    const hit = (await this.options.services.limits?.admit('calls', route.owner, leg.uuid)) ?? null;
    if (hit) {
      this.options.services.log.info({ callUuid: leg.uuid, limit: hit.name }, describeHit(hit));
      // 486, as PBXs answer a call beyond a channel limit: a 5xx would send it to another node.
      await call.hangup({
        cause: hangupCause('Concurrency Limit Breached'),
        source: 'Service',
        status: 'failed',
        sipStatus: 486,
      });
      return;
    }
    if (route.kind === 'app' && route.registeredCaller && invite.flow.connectionId) {
      // One of our endpoints or token clients, on a connection: found again on its new one.
      const aor = `sip:${route.from}@${this.options.legs.publicHost}`;
      const context = this.targetContext(route.owner);
      leg.reachPeer = (contact) => connectionOfContact(aor, contact, context);
    }
    if (!(await leg.prepare(route.kind === 'app' ? route.srtp : undefined))) return;
    // A trunk call rings when the PBX does.
    if (route.kind !== 'trunk') leg.ring();
    if (route.kind === 'endpoint') void connectToEndpoint(call, route.uri, this.dialDeps());
    else if (route.kind === 'trunk') {
      const { services, legs, trunks } = this.options;
      void relayToTrunk(call, route.trunk, {
        services,
        legs,
        ...trunks,
        ringCaller: () => leg.ring(),
      }).catch((error: Error) => {
        services.log.warn({ err: error, callUuid: call.uuid }, 'trunk call failed');
        void call.hangup({
          cause: hangupCause('Internal Error'),
          source: 'Error',
          status: 'failed',
          reason: `the trunk call failed: ${error.message}`,
        });
      });
    } else call.startApplication();
  }

  /** What Dial needs from the engine: services, legs, and how to route a target. */
  private dialDeps(): DialDeps {
    return {
      services: this.options.services,
      legs: this.options.legs,
      numberPlan: (uuid, number, caller) => this.numberPlan(uuid, number, caller),
      sipTarget: (uri, owner) => this.sipTarget(uri, owner),
    };
  }

  private track(call: Call, owner: CallAccount, requestUuid: string | null): void {
    this.live.set(call.uuid, { call, owner });
    call.dial = (instruction) => runDial(call, instruction, this.dialDeps());
    call.conference = async (instruction) => {
      const result = await this.conferences.join(call, instruction);
      return 'refused' in result ? null : result;
    };
    void call.finished.then(() => {
      this.live.delete(call.uuid);
      void this.options.services.limits
        ?.release('calls', call.uuid)
        .catch((error: Error) =>
          this.options.services.log.warn(
            { err: error, callUuid: call.uuid },
            'the call limit was not released',
          ),
        );
      if (this.live.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
      if (requestUuid) {
        const uuids = this.requests.get(requestUuid);
        uuids?.delete(call.uuid);
        if (uuids?.size === 0) this.requests.delete(requestUuid);
      }
    });
  }
}

function accountOf(owner: CallOwner): CallAccount {
  return {
    authId: owner.authId,
    account: owner.tenant,
    subaccount: owner.isMain ? null : owner.authId,
  };
}

function visible(viewer: CallOwner, owner: CallAccount): boolean {
  if (viewer.tenant !== owner.account) return false;
  // A main account sees its subaccounts' calls too; a subaccount only its own.
  return viewer.isMain || owner.subaccount === viewer.authId;
}
