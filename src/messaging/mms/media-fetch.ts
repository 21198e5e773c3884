import { httpExchange } from '../../callbacks/http-exchange.js';
import { invalidParameter } from '../../core/errors.js';
import type { OutboundGuard } from '../../core/outbound-guard.js';

/** messaging document, Limits: "MMS media max 10 URLs, total under 5 MB". */
export const MAX_MEDIA_URLS = 10;
export const MAX_MEDIA_BYTES = 5 * 1024 * 1024 - 1;
const FETCH_TIMEOUT_MS = 10_000;

/** What carriers take in an MMS: pictures, short video and audio, text, contact cards, PDF. */
const ACCEPTED_TYPES =
  /^(image\/(jpeg|png|gif|bmp|webp)|video\/(mp4|3gpp|3gpp2|quicktime|h264)|audio\/(mpeg|mp4|amr|ogg|aac|wav|x-wav|3gpp|midi)|text\/(plain|vcard|x-vcard|calendar|csv|rtf)|application\/(pdf|smil))$/;

export interface FetchedMedia {
  url: string;
  contentType: string;
  body: Buffer;
  fileName: string;
}

/**
 * Fetches the media of an MMS, one after the other, within the 5 MB budget: a file that would
 * pass it is not read further. Throws a 400 naming the URL and the rule (a URL the outbound
 * guard refuses among them).
 */
export async function fetchMedia(
  urls: string[],
  guard: OutboundGuard,
  timeoutMs = FETCH_TIMEOUT_MS,
): Promise<FetchedMedia[]> {
  if (urls.length > MAX_MEDIA_URLS)
    throw invalidParameter(`media_urls holds ${urls.length} URLs: at most ${MAX_MEDIA_URLS}`);
  const fetched: FetchedMedia[] = [];
  let left = MAX_MEDIA_BYTES;
  for (const [k, url] of urls.entries()) {
    const where = `media_urls[${k}] ${url}`;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw invalidParameter(`${where} is not an http or https URL`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw invalidParameter(`${where} is not an http or https URL`);
    const result = await httpExchange(
      { url: parsed, method: 'GET', headers: { Accept: '*/*' } },
      { timeoutMs, guard, readBody: { maxBytes: left } },
    );
    if (!result.ok && 'refused' in result && result.refused)
      throw invalidParameter(`${where} is refused: ${result.error}`);
    if (!result.ok) {
      if ('status' in result && result.status >= 200 && result.status < 300)
        throw invalidParameter(`${where}: the media together must be under 5 MB`);
      throw invalidParameter(
        `${where} could not be fetched: ${'status' in result ? `HTTP ${result.status}` : result.error}`,
      );
    }
    if (result.status < 200 || result.status >= 300)
      throw invalidParameter(`${where} could not be fetched: HTTP ${result.status}`);
    const contentType = result.contentType.split(';')[0]!.trim().toLowerCase();
    if (!ACCEPTED_TYPES.test(contentType))
      throw invalidParameter(
        `${where} is ${contentType || 'of no content type'}: an MMS carries images, video, audio, text, vCard or PDF`,
      );
    const body = result.body ?? Buffer.alloc(0);
    if (body.length === 0) throw invalidParameter(`${where} is empty`);
    left -= body.length;
    fetched.push({
      url,
      contentType,
      body,
      fileName: decodeURIComponent(parsed.pathname.split('/').pop() ?? '') || `media${k}`,
    });
  }
  return fetched;
}
