import type { OutboundRule } from '../core/address-policy.js';
import type { OutboundGuard } from '../core/outbound-guard.js';
import type { CallbackRequest } from './callback-request.js';
import { signedExchange } from './http-exchange.js';
import type { SigningTokens } from './signature.js';

/** What one fetch of an application URL gave. */
export type FetchedDocument =
  | { ok: true; status: number; body: string; contentType: string }
  /** `refused`: the outbound rule that refused the URL (nothing was sent). */
  | { ok: false; status?: number; error: string; refused?: OutboundRule };

/** Answer XML is at most 100 KB (wire-compat); a larger body is refused unread. */
export const MAX_DOCUMENT_BYTES = 100 * 1024;

/**
 * One signed request to a client URL whose response body is wanted (answer_url, fallback_url,
 * action and redirect URLs): a 2xx with a body of at most `maxBytes` is a document; anything
 * else is a failure with its reason. Redirects are not followed; a 3xx-5xx body is not read.
 */
export async function fetchSignedDocument(
  request: CallbackRequest,
  tokens: SigningTokens,
  timeoutMs: number,
  guard: OutboundGuard,
  maxBytes = MAX_DOCUMENT_BYTES,
): Promise<FetchedDocument> {
  const result = await signedExchange(request, tokens, {
    timeoutMs,
    guard,
    readBody: { maxBytes },
  });
  if (!result.ok) return result;
  const { status } = result;
  if (status < 200 || status >= 300) return { ok: false, status, error: `HTTP ${status}` };
  return {
    ok: true,
    status,
    body: (result.body ?? Buffer.alloc(0)).toString('utf8'),
    contentType: result.contentType,
  };
}
