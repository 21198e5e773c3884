import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { postTo } from './http-post.js';

/** A request the stand-in received, its JSON body parsed. */
export interface UpstreamRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  authorization: string | undefined;
  body: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface StoredTemplate {
  id: string;
  waba: string;
  name: string;
  language: string;
  category: string;
  components: unknown[];
  status: string;
}

/** An answer the next request gets instead of the normal one. */
type Failure = { status: number; code: number; message: string } | 'hang';

const VERSION = 'v21.0';

/**
 * The chat-app upstream (the WhatsApp Business Cloud API) on 127.0.0.1 and a random port, as
 * its public documentation describes it: `POST /{phone-number-id}/messages`, the templates of
 * a business account (`/{waba-id}/message_templates`: create, list, delete by name and
 * hsm_id; `POST /{template-id}` to edit), Bearer tokens, Graph error bodies, and the webhooks
 * it sends (statuses, template reviews, inbound messages) signed with X-Hub-Signature-256.
 */
export class GraphUpstream {
  readonly requests: UpstreamRequest[] = [];
  readonly templates = new Map<string, StoredTemplate>();
  private readonly tokens = new Map<string, string>();
  /** Media customers sent, by media id: its type, bytes and the business account it is for. */
  private readonly media = new Map<string, { mime: string; body: Buffer; waba: string }>();
  private readonly failures: Failure[] = [];
  private nextId = 1_000_000_000_000_000;
  private nextMessage = 1;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<GraphUpstream> {
    const server = createServer();
    const upstream = new GraphUpstream(server);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      let raw = '';
      req.on('data', (chunk) => (raw += chunk));
      req.on('end', () => upstream.handle(req, raw, res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return upstream;
  }

  /** What VOXGATE_CHATAPP_GRAPH_URL is set to: the base with the version. */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/${VERSION}`;
  }

  /** A business account (and its phone-number ids) that accepts `token`. */
  allow(token: string, ...ids: string[]): void {
    for (const id of ids) this.tokens.set(id, token);
  }

  /** Forgets requests, templates, media and pending failures (between tests). */
  reset(): void {
    this.requests.length = 0;
    this.templates.clear();
    this.media.clear();
    this.failures.length = 0;
  }

  /** A file a customer sent to `waba`, downloadable with its token as upstream allows. */
  addMedia(waba: string, id: string, mime: string, body: Buffer): void {
    this.media.set(id, { mime, body, waba });
  }

  /** The next request is answered with a Graph error, or never ('hang'). */
  failNext(failure: Failure): void {
    this.failures.push(failure);
  }

  requestsTo(pathEnd: string): UpstreamRequest[] {
    return this.requests.filter((r) => r.path.endsWith(pathEnd));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private handle(req: IncomingMessage, raw: string, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://upstream');
    const parts = url.pathname.split('/').filter(Boolean);
    let body: Record<string, any> = {}; // eslint-disable-line @typescript-eslint/no-explicit-any
    try {
      if (raw !== '') body = JSON.parse(raw);
    } catch {
      return this.error(res, 400, 100, 'Invalid JSON body');
    }
    this.requests.push({
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      authorization: req.headers.authorization,
      body,
    });
    const failure = this.failures.shift();
    if (failure === 'hang') return;
    if (failure) return this.error(res, failure.status, failure.code, failure.message);
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (parts[0] === 'media-file') {
      // The short-lived URL GET /{media-id} gives: the bytes, for the same token.
      const file = this.media.get(parts[1] ?? '');
      if (!file || token !== this.tokens.get(file.waba))
        return this.error(res, 404, 100, 'no such media');
      res.writeHead(200, { 'Content-Type': file.mime }).end(file.body);
      return;
    }
    if (parts[0] !== VERSION) return this.error(res, 400, 2500, 'Unknown path components');
    if (req.method === 'GET' && parts.length === 2 && this.media.has(parts[1]!)) {
      const file = this.media.get(parts[1]!)!;
      if (token !== this.tokens.get(file.waba))
        return this.error(res, 401, 190, 'Invalid OAuth access token - Cannot parse access token');
      const origin = this.baseUrl.replace(`/${VERSION}`, '');
      return this.json(res, 200, {
        messaging_product: 'whatsapp',
        url: `${origin}/media-file/${parts[1]}`,
        mime_type: file.mime,
        file_size: file.body.length,
        id: parts[1],
      });
    }
    const [, object, edge] = parts;
    const owner = object ? this.ownerOf(object) : undefined;
    if (!owner || token !== this.tokens.get(owner))
      return this.error(res, 401, 190, 'Invalid OAuth access token - Cannot parse access token');

    if (req.method === 'POST' && edge === 'messages') return this.message(res, body);
    if (edge === 'message_templates') {
      if (req.method === 'POST') return this.createTemplate(res, object!, body);
      if (req.method === 'GET') return this.listTemplates(res, object!);
      if (req.method === 'DELETE') return this.deleteTemplate(res, object!, url.searchParams);
    }
    if (req.method === 'POST' && edge === undefined && this.templates.has(object!)) {
      const template = this.templates.get(object!)!;
      if (body.components) template.components = body.components;
      if (body.category) template.category = body.category;
      template.status = 'PENDING';
      return this.json(res, 200, { success: true });
    }
    return this.error(res, 400, 100, 'Unsupported request');
  }

  /** Tokens are registered per business account and phone-number id; templates by their id. */
  private ownerOf(object: string): string | undefined {
    if (this.tokens.has(object)) return object;
    return this.templates.get(object)?.waba;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private message(res: ServerResponse, body: Record<string, any>): void {
    if (body.messaging_product !== 'whatsapp')
      return this.error(res, 400, 100, 'The parameter messaging_product is required.');
    if (typeof body.to !== 'string')
      return this.error(res, 400, 100, 'The parameter to is required.');
    const id = `wamid.HBgL${String(this.nextMessage++).padStart(12, '0')}`;
    this.json(res, 200, {
      messaging_product: 'whatsapp',
      contacts: [{ input: body.to, wa_id: body.to }],
      messages: [{ id }],
    });
  }

  private createTemplate(
    res: ServerResponse,
    waba: string,
    body: Record<string, any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  ): void {
    const clash = [...this.templates.values()].some(
      (t) => t.waba === waba && t.name === body.name && t.language === body.language,
    );
    if (clash)
      return this.error(
        res,
        400,
        100,
        `Message template "${body.name}" already exists in ${body.language}`,
      );
    const template: StoredTemplate = {
      id: String(this.nextId++),
      waba,
      name: body.name,
      language: body.language,
      category: body.category,
      components: body.components,
      status: 'PENDING',
    };
    this.templates.set(template.id, template);
    this.json(res, 200, { id: template.id, status: 'PENDING', category: template.category });
  }

  private listTemplates(res: ServerResponse, waba: string): void {
    const data = [...this.templates.values()].filter((t) => t.waba === waba);
    this.json(res, 200, { data, paging: {} });
  }

  private deleteTemplate(res: ServerResponse, waba: string, query: URLSearchParams): void {
    const name = query.get('name');
    if (!name) return this.error(res, 400, 100, 'The parameter name is required.');
    const hsm = query.get('hsm_id');
    const doomed = [...this.templates.values()].filter(
      (t) => t.waba === waba && t.name === name && (hsm === null || t.id === hsm),
    );
    if (doomed.length === 0) return this.error(res, 404, 100, `Template ${name} not found`);
    for (const t of doomed) this.templates.delete(t.id);
    this.json(res, 200, { success: true });
  }

  private json(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  }

  private error(res: ServerResponse, status: number, code: number, message: string): void {
    this.json(res, status, {
      error: { message, type: 'OAuthException', code, fbtrace_id: 'AbCdEfGh123' },
    });
  }
}

/** The body of a webhook POST for one business account and one field. */
export function webhookBody(waba: string, field: string, value: unknown): string {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [{ id: waba, changes: [{ value, field }] }],
  });
}

/** A template review event (`message_template_status_update`). */
export function templateReview(
  waba: string,
  review: { id: string; name: string; language: string; event: string; reason?: string },
): string {
  return webhookBody(waba, 'message_template_status_update', {
    event: review.event,
    message_template_id: Number(review.id),
    message_template_name: review.name,
    message_template_language: review.language,
    reason: review.reason ?? 'NONE',
  });
}

/** POSTs a webhook body to `url` signed with `appSecret` as upstream does; resolves the status. */
export function postWebhook(
  url: string,
  body: string,
  appSecret: string,
  signature = `sha256=${createHmac('sha256', appSecret).update(body).digest('hex')}`,
): Promise<{ status: number; body: string }> {
  return postTo(url, body, {
    'Content-Type': 'application/json',
    'X-Hub-Signature-256': signature,
  });
}

/** Statuses of sent messages (`messages` field, `statuses[]`), as upstream reports them. */
export function messageStatuses(
  waba: string,
  phone: { id: string; display: string },
  statuses: {
    id: string;
    status: 'sent' | 'delivered' | 'read' | 'failed';
    recipient: string;
    conversation?: { id: string; origin: string; expires: number };
    error?: { code: number; title: string };
  }[],
): string {
  return webhookBody(waba, 'messages', {
    messaging_product: 'whatsapp',
    metadata: { display_phone_number: phone.display, phone_number_id: phone.id },
    statuses: statuses.map((s) => ({
      id: s.id,
      status: s.status,
      timestamp: String(Math.floor(Date.now() / 1000)),
      recipient_id: s.recipient,
      ...(s.conversation
        ? {
            conversation: {
              id: s.conversation.id,
              expiration_timestamp: String(s.conversation.expires),
              origin: { type: s.conversation.origin },
            },
            pricing: { billable: true, pricing_model: 'CBP', category: s.conversation.origin },
          }
        : {}),
      ...(s.error ? { errors: [{ code: s.error.code, title: s.error.title }] } : {}),
    })),
  });
}

/** Inbound chat messages (`messages` field, `messages[]`) from a customer to a business number. */
export function inboundMessages(
  waba: string,
  phone: { id: string; display: string },
  from: { waId: string; name: string },
  messages: Record<string, unknown>[],
): string {
  return webhookBody(waba, 'messages', {
    messaging_product: 'whatsapp',
    metadata: { display_phone_number: phone.display, phone_number_id: phone.id },
    contacts: [{ profile: { name: from.name }, wa_id: from.waId }],
    messages: messages.map((m, k) => ({
      from: from.waId,
      id: `wamid.IN${String(k).padStart(8, '0')}`,
      timestamp: String(Math.floor(Date.now() / 1000)),
      ...m,
    })),
  });
}
