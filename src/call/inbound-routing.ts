import { isSipUri, type SipRequest, type SipResponse } from '../sip/message/index.js';
import type { Flow } from '../sip/transport/flow.js';
import type { RequestAuthenticator } from '../sip/ua/request-authenticator.js';
import type { ApplicationRecord, TrunkRecord } from '../state/records.js';
import { defaultApplication, numberApplication } from '../state/number-application.js';
import type { State } from '../state/state.js';
import { carrierRefusal, type InboundCarrierMode } from './incoming-carriers.js';
import type { HttpMethod } from './app/app-call.js';
import type { CallAccount, CallUrls } from './call.js';
import type { SrtpPolicy } from './srtp-policy.js';

/** Where an inbound call goes, or why it is refused. */
export type InboundRoute =
  | {
      kind: 'app';
      owner: CallAccount;
      from: string;
      to: string;
      callerName: string | null;
      urls: CallUrls;
      /** The calling endpoint's SRTP policy (none for calls from outside). */
      srtp?: SrtpPolicy;
      /** The caller is one of our endpoints or token clients, `from` its user. */
      registeredCaller?: true;
    }
  /** A call to one of our endpoints' SIP URIs, from outside: it is dialled directly. */
  | {
      kind: 'endpoint';
      uri: string;
      owner: CallAccount;
      from: string;
      to: string;
      callerName: string | null;
    }
  /** A call to a number attached to an inbound trunk: relayed to the trunk's URIs. */
  | {
      kind: 'trunk';
      trunk: TrunkRecord;
      owner: CallAccount;
      from: string;
      to: string;
      callerName: string | null;
    }
  | {
      kind: 'refuse';
      status: number;
      reason: string;
      /** Why, for a warn log line, when the refusal says something is wrong. */
      warning?: { message: string; fields: Record<string, unknown> };
    }
  /** Send this response (a digest challenge, a refused token). */
  | { kind: 'respond'; response: SipResponse };

export interface RoutingContext {
  state: State;
  /** Checks an endpoint's digest or a WebSocket client's bearer token. */
  callers: RequestAuthenticator;
  /** Whether a call to a number must come from its IncomingCarrier's IP set. */
  inboundCarriers: InboundCarrierMode;
  /** The carrier registered with this Contact user (carrier-registrations.ts), or null. */
  registeredContact?: (user: string) => string | null;
}

/**
 * Routes an INVITE, in this order:
 * 1. to a number we hold, from an address of its IncomingCarrier (any address with
 *    VOXGATE_INBOUND_CARRIERS=open): its inbound trunk when it has one (relayed to the trunk's
 *    origination URIs), else the Number's application (or its account's default number app);
 *    from elsewhere, 403, unless it is one of our endpoints calling (step 2);
 * 2. from one of our endpoints (digest-authenticated, or a bearer token over WebSocket):
 *    the endpoint's application, or its account's default endpoint application;
 * 3. to one of our endpoints' SIP URIs: dialled directly (2020 when it is not registered);
 * 4. anything else: 404.
 */
export async function routeInbound(
  context: RoutingContext,
  invite: { readonly request: SipRequest; readonly flow: Flow },
): Promise<InboundRoute> {
  const { state } = context;
  const request = invite.request;
  const called = calledUser(context, request);
  const digits = called.replace(/^\+/, '');
  const number = /^\d{6,15}$/.test(digits)
    ? await state.numbers.findByUnique({ space: 'number', value: digits })
    : null;
  const from = request.from();
  const caller = isSipUri(from.uri) ? (from.uri.user ?? '') : '';
  if (!number || !number.voice_enabled) {
    return routeEndpoint(context, invite, called, caller, from.displayName);
  }
  if (context.inboundCarriers === 'enforce') {
    const source = invite.flow.remote.address;
    const refusal = await carrierRefusal(state, number, source);
    if (refusal) {
      // One of our endpoints (or a token client) dialling a number we hold is no carrier.
      if (await claimsToBeOurCaller(context, invite, caller)) {
        return routeEndpoint(context, invite, called, caller, from.displayName);
      }
      return {
        kind: 'refuse',
        status: 403,
        reason: 'Forbidden',
        warning: {
          message: 'call to a number refused: not from its carrier',
          fields: { source, number: number.number, reason: refusal },
        },
      };
    }
  }
  const owner = {
    authId: number.subaccount ?? number.account,
    account: number.account,
    subaccount: number.subaccount,
  };
  if (number.trunk_id) {
    const trunk = await state.trunks.get(number.account, number.trunk_id);
    if (!trunk) return { kind: 'refuse', status: 480, reason: 'Trunk Not Found' };
    return { kind: 'trunk', trunk, owner, from: caller, to: digits, callerName: from.displayName };
  }
  const app = await numberApplication(state, number);
  if (!app) return { kind: 'refuse', status: 480, reason: 'No Application' };
  return {
    kind: 'app',
    owner,
    from: caller,
    to: digits,
    callerName: from.displayName,
    urls: urlsOf(app),
  };
}

/**
 * The user called: the Request-URI's. A carrier we register with sends its calls to the
 * Contact we registered, whose user is the registration's, and names the dialled number in
 * To (RFC 3261 10.2: the registrar's proxy rewrites the Request-URI to the binding): for those
 * the number is To's user. An IncomingCarrier's IP set still applies to the number.
 */
function calledUser(context: RoutingContext, request: SipRequest): string {
  const target = request.requestUri();
  const user = isSipUri(target) ? (target.user ?? '') : '';
  if (user === '' || context.registeredContact?.(user) == null) return user;
  const to = request.to().uri;
  return isSipUri(to) && to.user ? to.user : user;
}

/** A request over WebSocket, with credentials, or from one of our endpoints' user names. */
async function claimsToBeOurCaller(
  context: RoutingContext,
  invite: { readonly request: SipRequest; readonly flow: Flow },
  caller: string,
): Promise<boolean> {
  if (invite.flow.protocol === 'WS' || invite.flow.protocol === 'WSS') return true;
  if (invite.request.authorization().length > 0) return true;
  return (
    (await context.state.endpoints.findByUnique({ space: 'sip_user', value: caller })) !== null
  );
}

async function routeEndpoint(
  context: RoutingContext,
  invite: { readonly request: SipRequest; readonly flow: Flow },
  called: string,
  caller: string,
  callerName: string | null,
): Promise<InboundRoute> {
  const { state } = context;
  const request = invite.request;
  const fromEndpoint = await state.endpoints.findByUnique({ space: 'sip_user', value: caller });
  const overWebSocket = invite.flow.protocol === 'WS' || invite.flow.protocol === 'WSS';
  if (fromEndpoint || overWebSocket || request.authorization().length > 0) {
    const verdict = await context.callers.authenticate(request, invite.flow, 'call', caller);
    if (!verdict.ok) return { kind: 'respond', response: verdict.response };
    const aor = verdict.aor;
    const endpoint =
      aor.kind === 'endpoint' ? await state.endpoints.get(aor.account, aor.id) : null;
    const app =
      aor.kind === 'token' && aor.app !== undefined
        ? await tokenApplication(state, aor, aor.app)
        : ((endpoint?.app_id ? await state.applications.get(aor.account, endpoint.app_id) : null) ??
          (await defaultApplication(state, aor.account, aor.subaccount, 'default_endpoint_app')));
    if (app === 'gone') {
      return {
        kind: 'refuse',
        status: 480,
        reason: `No Application (the token's app ${aor.app} is not in its account)`,
      };
    }
    if (!app) return { kind: 'refuse', status: 480, reason: 'No Application' };
    return {
      kind: 'app',
      owner: {
        authId: aor.subaccount ?? aor.account,
        account: aor.account,
        subaccount: aor.subaccount,
      },
      from: aor.user,
      to: called,
      callerName,
      urls: urlsOf(app),
      ...(endpoint?.srtp && { srtp: endpoint.srtp }),
      registeredCaller: true,
    };
  }
  const callee = called
    ? await state.endpoints.findByUnique({ space: 'sip_user', value: called })
    : null;
  if (callee) {
    const target = request.requestUri();
    return {
      kind: 'endpoint',
      uri: isSipUri(target) ? `sip:${called}@${target.host}` : `sip:${called}`,
      owner: {
        authId: callee.subaccount ?? callee.account,
        account: callee.account,
        subaccount: callee.subaccount,
      },
      from: caller,
      to: called,
      callerName,
    };
  }
  return { kind: 'refuse', status: 404, reason: 'Not Found' };
}

function urlsOf(app: ApplicationRecord): CallUrls {
  const method = (m: string): HttpMethod => (m === 'GET' ? 'GET' : 'POST');
  return {
    answer: {
      url: app.answer_url,
      method: method(app.answer_method),
      fallback: app.fallback_answer_url
        ? { url: app.fallback_answer_url, method: method(app.fallback_method) }
        : null,
    },
    hangup: app.hangup_url ? { url: app.hangup_url, method: method(app.hangup_method) } : null,
  };
}

/**
 * The application a token names (its app claim, checked when the token was made), which its
 * client's calls run; 'gone' when it was deleted or is no longer the token's (sub)account's:
 * such a call is refused, not run by an application the client never asked for.
 */
async function tokenApplication(
  state: State,
  owner: { account: string; subaccount: string | null },
  id: string,
): Promise<ApplicationRecord | 'gone'> {
  const app = await state.applications.get(owner.account, id);
  if (!app || (owner.subaccount !== null && app.subaccount !== owner.subaccount)) return 'gone';
  return app;
}
