import { buildCallbackHttpRequest } from './callback-attempt.js';
import type { CallbackRequest } from './callback-request.js';
import type { SigningTokens } from './signature.js';

/** What one fetch of an application URL gave. */
export type FetchedDocument =
  | { ok: true; status: number; body: string; contentType: string }
  | { ok: false; status?: number; error: string };

/** Answer XML is at most 100 KB (wire-compat); a larger body is refused unread. */
export const MAX_DOCUMENT_BYTES = 100 * 1024;

/**
 * One signed request to a client URL whose response body is wanted (answer_url, fallback_url,
 * action and redirect URLs): a 2xx with a body of at most `maxBytes` is a document; anything
 * else is a failure with its reason. Redirects are not followed.
 */
export async function fetchSignedDocument(
  request: CallbackRequest,
  tokens: SigningTokens,
  timeoutMs: number,
  maxBytes = MAX_DOCUMENT_BYTES,
): Promise<FetchedDocument> {
  const { url, init } = buildCallbackHttpRequest(request, tokens);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const response = await fetch(url, { ...init, signal: controller.signal, redirect: 'manual' });
    const { status } = response;
    if (status < 200 || status >= 300) {
      await response.body?.cancel().catch(() => undefined);
      return { ok: false, status, error: `HTTP ${status}` };
    }
    const declared = Number(response.headers.get('content-length') ?? '0');
    if (declared > maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      return { ok: false, status, error: `the document is larger than ${maxBytes} bytes` };
    }
    const body = await readLimited(response, maxBytes);
    if (body === null) {
      return { ok: false, status, error: `the document is larger than ${maxBytes} bytes` };
    }
    return { ok: true, status, body, contentType: response.headers.get('content-type') ?? '' };
  } catch (error) {
    if (controller.signal.aborted)
      return { ok: false, error: `no response within ${timeoutMs} ms` };
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    const code =
      cause instanceof Error
        ? ((cause as NodeJS.ErrnoException).code ?? cause.message)
        : String(cause);
    return { ok: false, error: code };
  } finally {
    clearTimeout(timer);
  }
}

async function readLimited(response: Response, maxBytes: number): Promise<string | null> {
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > maxBytes) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
