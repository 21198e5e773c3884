import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Client } from 'plivo';

/**
 * The official Node SDK (npm `plivo`) with every request sent to voxgate.
 *
 * The SDK's `url` option only moves part of its traffic: it sends voice requests (calls, live
 * calls, applications, endpoints) to its hard-coded public host whatever `url` says, with the
 * account's credentials in the Authorization header. This builds the SDK's own client and
 * changes two things, both read from the SDK's source (dist/rest/axios.js):
 *
 * - the request function the client is built with drops the SDK's "voice request" flag, so
 *   voice requests take the same path as every other one: the `url` given here; a request the
 *   SDK would send to another host of its own (lookups, call insights) is refused;
 * - the HTTP client the SDK uses (its axios) refuses, before any connection is made, a request
 *   that carries this client's credentials to anywhere but that URL.
 *
 * When the SDK no longer has the shape this relies on, building the client throws instead of
 * letting a request go elsewhere.
 */

export interface VoxgateSdkOptions {
  /** The gateway's HTTP origin, e.g. `http://127.0.0.1:8080` (a path prefix is kept). */
  url: string;
  authId: string;
  authToken: string;
  /** Per-request timeout in ms, as the SDK's own option; none by default. */
  timeout?: number;
}

type SdkParams = Record<string, unknown> | undefined;
type SdkRequest = (method: string, action: string, params?: SdkParams) => Promise<unknown>;
interface SdkRequestModule {
  Axios: (config: Record<string, unknown>) => SdkRequest;
}
interface AxiosHeadersLike {
  get?: (name: string) => unknown;
  [name: string]: unknown;
}
interface AxiosConfigLike {
  url?: string;
  baseURL?: string;
  headers?: AxiosHeadersLike;
}
type AxiosAdapter = (config: AxiosConfigLike) => Promise<unknown>;
interface AxiosLike {
  defaults: { adapter?: unknown };
  getAdapter: (adapter: unknown) => AxiosAdapter;
}

/** The parameter the SDK marks voice requests with (by then in snake case). */
const VOICE_FLAG = 'is_voice_request';
/** Parameters with which the SDK sends a request to a host of its own instead of `url`. */
const OTHER_HOST_FLAGS = ['is_call_insights_request', 'override_url'];

/** Authorization header → the URL prefixes requests carrying it may go to. */
const allowedPrefixes = new Map<string, Set<string>>();
const guardedClients = new WeakSet<object>();

const fail = (what: string): Error =>
  new Error(`voxgate sdk: ${what}; refusing to build a client whose requests could leave voxgate`);

/** The official SDK's client, every request of which goes to `options.url`. */
export function voxgateSdkClient(options: VoxgateSdkOptions): Client {
  const origin = new URL(options.url);
  if (origin.protocol !== 'http:' && origin.protocol !== 'https:')
    throw new Error(`voxgate sdk: url must be http or https, got ${options.url}`);
  const accountUrl = `${origin.origin}${origin.pathname.replace(/\/+$/, '')}/v1/Account/${encodeURIComponent(options.authId)}`;

  const load = createRequire(import.meta.url);
  const clientPath = load.resolve('plivo');
  const requestModule = load(join(dirname(clientPath), 'axios.js')) as Partial<SdkRequestModule>;
  const axios = createRequire(join(dirname(clientPath), 'axios.js'))('axios') as Partial<AxiosLike>;
  const plivo = load('plivo') as { Client?: new (...args: unknown[]) => Client };
  if (typeof requestModule.Axios !== 'function')
    throw fail('plivo/dist/rest/axios.js has no Axios');
  if (typeof plivo.Client !== 'function') throw fail('plivo exports no Client');
  guardTransport(axios);

  const authorization = `Basic ${Buffer.from(`${options.authId}:${options.authToken}`).toString('base64')}`;
  let prefixes = allowedPrefixes.get(authorization);
  if (!prefixes) allowedPrefixes.set(authorization, (prefixes = new Set()));
  prefixes.add(`${accountUrl}/`);

  // The client builds its one request function at construction through the module's export
  // (read at call time), so wrapping that export for the constructor's duration reaches it.
  const sdkBuild = (requestModule as SdkRequestModule).Axios;
  let built = 0;
  (requestModule as SdkRequestModule).Axios = (config) => {
    built += 1;
    return toGatewayOnly(sdkBuild(config));
  };
  let client: Client;
  try {
    client = new plivo.Client(options.authId, options.authToken, {
      url: accountUrl,
      ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
    });
  } finally {
    (requestModule as SdkRequestModule).Axios = sdkBuild;
  }
  if (built !== 1) throw fail(`the plivo Client built ${built} request functions, not 1`);
  return client;
}

/** The SDK's request function with its requests kept on the client's `url`. */
function toGatewayOnly(request: SdkRequest): SdkRequest {
  if (typeof request !== 'function') throw fail('the SDK request builder returned no function');
  return (method, action, params) => {
    if (params && typeof params === 'object') {
      const elsewhere = OTHER_HOST_FLAGS.find((flag) => flag in params);
      if (elsewhere !== undefined)
        return Promise.reject(
          new Error(
            `voxgate sdk: ${method} ${action} is sent by the SDK to another host (${elsewhere}); voxgate does not serve it, and the request was not sent`,
          ),
        );
      // Without the flag the SDK sends the request to `url` + '/' + action, as it does for
      // messages and every other non-voice resource.
      delete params[VOICE_FLAG];
    }
    return request(method, action, params);
  };
}

/**
 * Wraps the adapter of the axios the SDK loads: a request with the credentials of a client
 * built here, to a URL outside that client's prefixes, fails before it connects. Requests
 * with any other credentials (other clients in the process) pass untouched.
 */
function guardTransport(axios: Partial<AxiosLike>): void {
  if (!axios.defaults || typeof axios.getAdapter !== 'function')
    throw fail('the axios the SDK loads has no defaults or getAdapter');
  if (guardedClients.has(axios)) return;
  const { getAdapter } = axios as AxiosLike;
  const underlying = axios.defaults.adapter;
  const guarded: AxiosAdapter = (config) => {
    const prefixes = allowedPrefixes.get(authorizationOf(config.headers));
    if (prefixes) {
      const target = absoluteUrl(config);
      if (target === null || ![...prefixes].some((prefix) => target.href.startsWith(prefix)))
        return Promise.reject(
          new Error(
            `voxgate sdk: refused to send a request with this account's credentials to ${target?.origin ?? 'an unparsable URL'}, which is not the voxgate URL the client was built with`,
          ),
        );
    }
    return getAdapter(underlying)(config);
  };
  axios.defaults.adapter = guarded;
  guardedClients.add(axios);
}

function absoluteUrl(config: AxiosConfigLike): URL | null {
  try {
    return new URL(config.url ?? '', config.baseURL);
  } catch {
    return null;
  }
}

function authorizationOf(headers: AxiosHeadersLike | undefined): string {
  if (!headers) return '';
  const value = typeof headers.get === 'function' ? headers.get('authorization') : undefined;
  return String(value ?? headers.Authorization ?? headers.authorization ?? '');
}
