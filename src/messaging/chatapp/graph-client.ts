import { httpExchange } from '../../callbacks/http-exchange.js';
import { ApiError } from '../../core/errors.js';

/** What the client needs of a business account: never logged, never answered. */
export interface GraphCredentials {
  accessToken: string;
}

export interface GraphClientOptions {
  /** VOXGATE_CHATAPP_GRAPH_URL: the Graph base with its version, no trailing slash. */
  baseUrl: string;
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;
/** Graph answers are small JSON objects; a larger one is not what we asked for. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * A failed upstream request: the gateway answers it 502 with upstream's own code and message,
 * and changes nothing locally.
 */
export function upstreamError(message: string, transient = false): UpstreamError {
  return new UpstreamError(message, transient);
}

/** An upstream failure; `transient` when trying again later may succeed (no answer, 5xx, 429). */
export class UpstreamError extends ApiError {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super('upstream', message);
  }
}

/**
 * The Cloud API as voxgate uses it: messages, and templates of a business account. Every call
 * resolves with upstream's JSON answer or throws a 502 ApiError naming upstream's error code
 * and message (or the timeout).
 */
export class GraphClient {
  private readonly timeoutMs: number;

  constructor(private readonly options: GraphClientOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** `POST /{phone-number-id}/messages`; resolves with the upstream message id (wamid). */
  async sendMessage(
    credentials: GraphCredentials,
    phoneNumberId: string,
    message: Record<string, unknown>,
  ): Promise<string> {
    const answer = await this.request(credentials, 'POST', [phoneNumberId, 'messages'], {
      messaging_product: 'whatsapp',
      ...message,
    });
    const id = (answer.messages as { id?: unknown }[] | undefined)?.[0]?.id;
    if (typeof id !== 'string') throw upstreamError('upstream accepted the message without an id');
    return id;
  }

  /** `POST /{waba-id}/message_templates`; resolves with upstream's id, status and category. */
  async createTemplate(
    credentials: GraphCredentials,
    bizAccountId: string,
    template: Record<string, unknown>,
  ): Promise<{ id: string; status: string; category: string | null }> {
    const answer = await this.request(
      credentials,
      'POST',
      [bizAccountId, 'message_templates'],
      template,
    );
    if (typeof answer.id !== 'string')
      throw upstreamError('upstream created the template without an id');
    return {
      id: answer.id,
      status: typeof answer.status === 'string' ? answer.status : 'PENDING',
      category: typeof answer.category === 'string' ? answer.category : null,
    };
  }

  /** `POST /{template-id}`: new components (and category) for a template. */
  async updateTemplate(
    credentials: GraphCredentials,
    templateId: string,
    changes: Record<string, unknown>,
  ): Promise<void> {
    await this.request(credentials, 'POST', [templateId], changes);
  }

  /** `DELETE /{waba-id}/message_templates?name=&hsm_id=`: one template of a name. */
  async deleteTemplate(
    credentials: GraphCredentials,
    bizAccountId: string,
    name: string,
    templateId: string,
  ): Promise<void> {
    await this.request(credentials, 'DELETE', [bizAccountId, 'message_templates'], undefined, {
      name,
      hsm_id: templateId,
    });
  }

  /**
   * A media file a customer sent (`GET /{media-id}` gives a short-lived URL, fetched with the
   * same token), of at most `maxBytes`.
   */
  async downloadMedia(
    credentials: GraphCredentials,
    mediaId: string,
    maxBytes: number,
  ): Promise<{ contentType: string; body: Buffer }> {
    const info = await this.request(credentials, 'GET', [mediaId]);
    if (typeof info.url !== 'string')
      throw upstreamError(`upstream gave no URL for media ${mediaId}`);
    const result = await httpExchange(
      {
        url: new URL(info.url),
        method: 'GET',
        headers: { Authorization: `Bearer ${credentials.accessToken}` },
      },
      // A URL the operator's upstream gave, not a tenant's: not through the outbound guard.
      { timeoutMs: this.timeoutMs, readBody: { maxBytes }, guard: null },
    );
    if (!result.ok || result.status < 200 || result.status >= 300 || !result.body)
      throw upstreamError(
        `media ${mediaId} could not be fetched: ${result.ok ? `HTTP ${result.status}` : result.error}`,
      );
    const mime = typeof info.mime_type === 'string' ? info.mime_type : result.contentType;
    return { contentType: mime || 'application/octet-stream', body: result.body };
  }

  private async request(
    credentials: GraphCredentials,
    method: 'GET' | 'POST' | 'DELETE',
    path: string[],
    body?: Record<string, unknown>,
    query?: Record<string, string>,
  ): Promise<Record<string, unknown>> {
    const url = new URL(`${this.options.baseUrl}/${path.map(encodeURIComponent).join('/')}`);
    for (const [key, value] of Object.entries(query ?? {})) url.searchParams.set(key, value);
    const headers: Record<string, string> = {
      Authorization: `Bearer ${credentials.accessToken}`,
      Accept: 'application/json',
    };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const result = await httpExchange(
      { url, method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) },
      { timeoutMs: this.timeoutMs, readBody: { maxBytes: MAX_ANSWER_BYTES }, guard: null },
    );
    if (!result.ok)
      throw upstreamError(
        'status' in result
          ? `upstream answered ${result.status}: ${result.error}`
          : `upstream could not be reached: ${result.error}`,
        !('status' in result),
      );
    let answer: Record<string, unknown> = {};
    try {
      const text = result.body?.toString('utf8') ?? '';
      if (text !== '') answer = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw upstreamError(`upstream answered ${result.status} with a body that is not JSON`);
    }
    if (result.status < 200 || result.status >= 300) {
      const error = (answer.error ?? {}) as { code?: unknown; message?: unknown };
      const code = error.code === undefined ? '' : ` ${String(error.code)}`;
      const message = typeof error.message === 'string' ? error.message : `HTTP ${result.status}`;
      throw upstreamError(
        `upstream error${code}: ${message}`,
        result.status >= 500 || result.status === 429,
      );
    }
    return answer;
  }
}
