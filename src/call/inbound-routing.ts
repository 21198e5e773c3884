import { isSipUri, type SipRequest } from '../sip/message/index.js';
import type { ApplicationRecord } from '../state/records.js';
import type { State } from '../state/state.js';
import type { HttpMethod } from './app/app-call.js';
import type { CallAccount, CallUrls } from './call.js';

/** Where an inbound call goes, or why it is refused. */
export type InboundRoute =
  | {
      kind: 'app';
      owner: CallAccount;
      from: string;
      to: string;
      callerName: string | null;
      urls: CallUrls;
    }
  | { kind: 'refuse'; status: number; reason: string };

/**
 * Routes an INVITE from a trunk or carrier: the Request-URI's user part is the number
 * called; the Number record that holds it names the application (or its account's default
 * number application), whose answer_url then runs the call.
 */
export async function routeInbound(
  state: State,
  invite: { readonly request: SipRequest },
): Promise<InboundRoute> {
  const request = invite.request;
  const target = request.requestUri();
  const called = isSipUri(target) ? (target.user ?? '') : '';
  const digits = called.replace(/^\+/, '');
  if (!/^\d{6,15}$/.test(digits)) {
    return { kind: 'refuse', status: 404, reason: 'Not Found' };
  }
  const number = await state.numbers.findByUnique({ space: 'number', value: digits });
  if (!number || !number.voice_enabled) return { kind: 'refuse', status: 404, reason: 'Not Found' };
  const app =
    (number.app_id ? await state.applications.get(number.account, number.app_id) : null) ??
    (await defaultNumberApp(state, number.account, number.subaccount));
  if (!app) return { kind: 'refuse', status: 480, reason: 'No Application' };
  const from = request.from();
  const caller = isSipUri(from.uri) ? (from.uri.user ?? '') : '';
  return {
    kind: 'app',
    owner: {
      authId: number.subaccount ?? number.account,
      account: number.account,
      subaccount: number.subaccount,
    },
    from: caller,
    to: digits,
    callerName: from.displayName,
    urls: urlsOf(app),
  };
}

async function defaultNumberApp(
  state: State,
  account: string,
  subaccount: string | null,
): Promise<ApplicationRecord | null> {
  const apps = await state.applications.all(account);
  return apps.find((a) => a.default_number_app && a.subaccount === subaccount) ?? null;
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
