import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { OutboundGuard } from './outbound-guard.js';

export interface GuardedRequestInit {
  method: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Redirects followed, each through the guard; 0 (the default) returns a 3xx as it is. */
  maxRedirects?: number;
  signal?: AbortSignal;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * One HTTP request to a tenant's URL through the outbound guard: the host is resolved and
 * checked once and the connection made to that address (TLS still verifies the URL's host).
 * A redirect, when followed, is checked the same way before it is requested. Rejects with
 * OutboundRefused when the guard refuses a hop, or with the connection's error.
 */
export async function guardedRequest(
  guard: OutboundGuard,
  url: URL,
  init: GuardedRequestInit,
): Promise<{ response: IncomingMessage; url: URL }> {
  let current = url;
  let method = init.method;
  let body = init.body;
  const headers = { ...init.headers };
  for (let hop = 0; ; hop++) {
    const target = await guard.pin(current);
    init.signal?.throwIfAborted();
    const response = await directRequest(
      current,
      { ...init, method, headers, body },
      target.lookup,
    );
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (!REDIRECTS.has(status) || !location || hop >= (init.maxRedirects ?? 0))
      return { response, url: current };
    response.resume();
    const next = new URL(location, current);
    if (next.protocol !== 'http:' && next.protocol !== 'https:')
      throw new Error(`redirected to a ${next.protocol} URL, which is not http or https`);
    // RFC 9110 15.4: after 303 (and, as every client does, 301 and 302 after POST) a GET.
    if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
      for (const name of Object.keys(headers))
        if (/^content-(type|length)$/i.test(name)) delete headers[name];
    }
    // Credentials given for one origin are not handed to another.
    if (next.origin !== current.origin)
      for (const name of Object.keys(headers))
        if (/^authorization$/i.test(name)) delete headers[name];
    current = next;
  }
}

/**
 * One request as it is, redirects not followed; the connection goes where `lookup` says (the
 * address the guard checked).
 */
function directRequest(
  url: URL,
  init: GuardedRequestInit,
  lookup?: LookupFunction,
): Promise<IncomingMessage> {
  const { method, headers, body } = init;
  const secure = url.protocol === 'https:';
  const request = secure ? httpsRequest : httpRequest;
  // The options the URL stands for (what http.request would derive from it).
  const options: RequestOptions = {
    protocol: url.protocol,
    hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
    path: `${url.pathname}${url.search}`,
    method,
    headers,
  };
  if (url.port !== '') options.port = Number(url.port);
  if (url.username !== '' || url.password !== '')
    options.auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  if (lookup) options.lookup = lookup;
  if (init.signal) options.signal = init.signal;
  return new Promise((resolve, reject) => {
    const req = request(options, resolve);
    req.on('error', reject);
    req.end(body);
  });
}
