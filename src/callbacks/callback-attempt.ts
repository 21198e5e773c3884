import type { OutboundRule } from '../core/address-policy.js';
import type { OutboundGuard } from '../core/outbound-guard.js';
import type { CallbackRequest } from './callback-request.js';
import { signedExchange } from './http-exchange.js';
import type { SigningTokens } from './signature.js';

export type AttemptOutcome =
  | { ok: true; status: number; body?: string }
  /** `refused`: the outbound rule that refused the URL (nothing was sent). */
  | { ok: false; status?: number; error: string; refused?: OutboundRule };

/**
 * One signed attempt. Success is any 2xx; a redirect is not followed and counts as failure.
 * With `readBodyBytes` a 2xx body of at most that size is read and returned.
 */
export async function attemptCallback(
  request: CallbackRequest,
  tokens: SigningTokens,
  timeoutMs: number,
  guard: OutboundGuard,
  readBodyBytes?: number,
): Promise<AttemptOutcome> {
  const result = await signedExchange(
    request,
    tokens,
    readBodyBytes
      ? { timeoutMs, guard, readBody: { maxBytes: readBodyBytes } }
      : { timeoutMs, guard },
  );
  if (!result.ok) return result;
  const { status } = result;
  if (status >= 200 && status < 300)
    return result.body
      ? { ok: true, status, body: result.body.toString('utf8') }
      : { ok: true, status };
  return { ok: false, status, error: `HTTP ${status}` };
}
