import { bodyObject } from '../../core/body-object.js';
import { HTTP_PROTOCOLS, isAbsoluteUrl } from '../../core/absolute-url.js';
import { invalidParameter, missingParameter } from '../../core/errors.js';
import { placeholdersOf } from './template-rules.js';

/** messaging document, Limits: "Chat-app freeform text 4,096 characters". */
export const MAX_CHATAPP_TEXT = 4096;

/** What one chat-app message carries: exactly one of these. */
export type ChatAppContent =
  | { kind: 'text'; body: string }
  | { kind: 'template'; name: string; language: string; components: unknown[] }
  | { kind: 'interactive'; interactive: Record<string, unknown> }
  | {
      kind: 'location';
      location: { latitude: number; longitude: number; name?: string; address?: string };
    }
  | { kind: 'media'; mediaType: MediaType; link: string; caption?: string };

type MediaType = 'image' | 'video' | 'audio' | 'document';
type Json = Record<string, unknown>;

const MEDIA_TYPES: [RegExp, MediaType][] = [
  [/\.(jpe?g|png|webp)$/i, 'image'],
  [/\.(mp4|3gpp?)$/i, 'video'],
  [/\.(mp3|ogg|opus|aac|amr|m4a)$/i, 'audio'],
];

/**
 * The content of a `POST Message/` with `type` chatapp (or whatsapp): one of `text` (at most
 * 4,096 characters), `template`, `interactive`, `location` or one URL in `media_urls` (with
 * `text` as its caption). Throws a 400 naming the field, or a 422 when none is given.
 */
export function parseChatAppContent(body: Json): ChatAppContent {
  const text = typeof body.text === 'string' && body.text !== '' ? body.text : undefined;
  if (body.text !== undefined && body.text !== null && typeof body.text !== 'string')
    throw invalidParameter('text must be a string');
  if (text !== undefined && [...text].length > MAX_CHATAPP_TEXT)
    throw invalidParameter(
      `text holds ${[...text].length} characters: a chat-app text is at most ${MAX_CHATAPP_TEXT.toLocaleString('en-US')}`,
    );
  const given = (['template', 'interactive', 'location', 'media_urls'] as const).filter(
    (k) => body[k] !== undefined && body[k] !== null && body[k] !== '',
  );
  if (given.length > 1)
    throw invalidParameter(`${given.join(' and ')} cannot be sent together: give one of them`);
  if (text !== undefined && (given[0] === 'interactive' || given[0] === 'location'))
    throw invalidParameter(
      `text cannot be sent with ${given[0]}: put it in the ${given[0]} itself`,
    );
  switch (given[0]) {
    case 'template':
      return parseTemplate(body.template, text);
    case 'interactive':
      return parseInteractive(body.interactive);
    case 'location':
      return parseLocation(body.location);
    case 'media_urls':
      return parseMedia(body.media_urls, text);
    default:
      if (text === undefined)
        throw missingParameter(
          'missing required parameter: text (or template, interactive, location or media_urls)',
        );
      return { kind: 'text', body: text };
  }
}

/** What the MDR keeps as `text`: the text, caption, or what kind of message it was. */
export function describeContent(content: ChatAppContent): string {
  switch (content.kind) {
    case 'text':
      return content.body;
    case 'template':
      return `template ${content.name} (${content.language})`;
    case 'interactive':
      return `interactive ${String(content.interactive.type)}`;
    case 'location':
      return `location ${content.location.latitude},${content.location.longitude}`;
    case 'media':
      return content.caption ?? `${content.mediaType} ${content.link}`;
  }
}

/** The Cloud API message for `to` (E.164 digits). */
export function upstreamMessage(to: string, content: ChatAppContent): Json {
  const base = { recipient_type: 'individual', to };
  switch (content.kind) {
    case 'text':
      return { ...base, type: 'text', text: { body: content.body, preview_url: false } };
    case 'template':
      return {
        ...base,
        type: 'template',
        template: {
          name: content.name,
          language: { code: content.language },
          ...(content.components.length > 0 ? { components: content.components } : {}),
        },
      };
    case 'interactive':
      return { ...base, type: 'interactive', interactive: content.interactive };
    case 'location':
      return { ...base, type: 'location', location: content.location };
    case 'media':
      return {
        ...base,
        type: content.mediaType,
        [content.mediaType]: {
          link: content.link,
          ...(content.caption && content.mediaType !== 'audio' ? { caption: content.caption } : {}),
        },
      };
  }
}

/**
 * Checks a template message against its stored template: the body parameters must fill the
 * body's placeholders. Returns the problem, or null.
 */
export function templateParameterProblem(
  components: unknown[],
  templateComponents: unknown[],
): string | null {
  const body = templateComponents.find((c) => (c as Json).type === 'BODY') as Json | undefined;
  const text = typeof body?.text === 'string' ? body.text : '';
  const { positional, named } = placeholdersOf(text);
  const needed = positional.length + named.length;
  const given = components.find((c) => String((c as Json).type).toLowerCase() === 'body') as
    Json | undefined;
  const parameters = Array.isArray(given?.parameters) ? given.parameters : [];
  if (parameters.length !== needed)
    return `template.components: the template's body has ${needed} placeholder(s) and ${parameters.length} body parameter(s) were given`;
  return null;
}

function parseTemplate(raw: unknown, text: string | undefined): ChatAppContent {
  if (text !== undefined) throw invalidParameter('text cannot be sent with a template');
  const template = bodyObject(raw, 'template');
  const name = template.name;
  if (typeof name !== 'string' || name === '')
    throw missingParameter('missing required parameter: template.name');
  const language =
    typeof template.language === 'string'
      ? template.language
      : (template.language as Json | undefined)?.code;
  if (typeof language !== 'string' || language === '')
    throw missingParameter('missing required parameter: template.language');
  const components = template.components ?? [];
  if (!Array.isArray(components)) throw invalidParameter('template.components must be an array');
  components.forEach((c, k) => {
    const type = (c as Json)?.type;
    if (typeof type !== 'string' || !/^(header|body|button)$/i.test(type))
      throw invalidParameter(`template.components[${k}].type must be header, body or button`);
    const parameters = (c as Json).parameters;
    if (parameters !== undefined && !Array.isArray(parameters))
      throw invalidParameter(`template.components[${k}].parameters must be an array`);
  });
  return { kind: 'template', name, language, components };
}

function parseInteractive(raw: unknown): ChatAppContent {
  const interactive = bodyObject(raw, 'interactive');
  const type = interactive.type;
  const action = bodyObject(interactive.action ?? {}, 'interactive.action');
  const body = interactive.body as Json | undefined;
  if (typeof body?.text !== 'string' || body.text === '')
    throw missingParameter('missing required parameter: interactive.body.text');
  if ([...body.text].length > 1024)
    throw invalidParameter('interactive.body.text is at most 1,024 characters');
  if (type === 'button') {
    const buttons = action.buttons;
    if (!Array.isArray(buttons) || buttons.length < 1 || buttons.length > 3)
      throw invalidParameter('interactive.action.buttons must hold 1 to 3 reply buttons');
    buttons.forEach((b, k) => {
      const title = ((b as Json)?.reply as Json | undefined)?.title;
      if (typeof title !== 'string' || title === '' || [...title].length > 20)
        throw invalidParameter(
          `interactive.action.buttons[${k}].reply.title must be 1 to 20 characters`,
        );
    });
  } else if (type === 'list') {
    const sections = action.sections;
    if (typeof action.button !== 'string' || action.button === '' || [...action.button].length > 20)
      throw invalidParameter('interactive.action.button must be 1 to 20 characters');
    if (!Array.isArray(sections) || sections.length < 1 || sections.length > 10)
      throw invalidParameter('interactive.action.sections must hold 1 to 10 sections');
    const rows = sections.reduce(
      (n: number, s) =>
        n + (Array.isArray((s as Json)?.rows) ? ((s as Json).rows as unknown[]).length : 0),
      0,
    );
    if (rows < 1 || rows > 10)
      throw invalidParameter('a list holds 1 to 10 rows in all its sections');
  } else if (type === 'cta_url') {
    const parameters = action.parameters as Json | undefined;
    if (
      typeof parameters?.display_text !== 'string' ||
      !isAbsoluteUrl(String(parameters?.url), HTTP_PROTOCOLS)
    )
      throw invalidParameter(
        'interactive.action.parameters needs display_text and an http or https url',
      );
  } else {
    throw invalidParameter('interactive.type must be button, list or cta_url');
  }
  return { kind: 'interactive', interactive };
}

function parseLocation(raw: unknown): ChatAppContent {
  const location = bodyObject(raw, 'location');
  const latitude = Number(location.latitude);
  const longitude = Number(location.longitude);
  if (location.latitude === undefined || !Number.isFinite(latitude) || Math.abs(latitude) > 90)
    throw invalidParameter('location.latitude must be a number from -90 to 90');
  if (location.longitude === undefined || !Number.isFinite(longitude) || Math.abs(longitude) > 180)
    throw invalidParameter('location.longitude must be a number from -180 to 180');
  const name = typeof location.name === 'string' ? location.name : undefined;
  const address = typeof location.address === 'string' ? location.address : undefined;
  return {
    kind: 'location',
    location: { latitude, longitude, ...(name ? { name } : {}), ...(address ? { address } : {}) },
  };
}

function parseMedia(raw: unknown, caption: string | undefined): ChatAppContent {
  const urls = Array.isArray(raw)
    ? raw
    : String(raw)
        .split(',')
        .map((u) => u.trim())
        .filter(Boolean);
  if (urls.length !== 1) throw invalidParameter('media_urls: a chat-app message carries one URL');
  const link = String(urls[0]);
  if (!isAbsoluteUrl(link, HTTP_PROTOCOLS))
    throw invalidParameter('media_urls must hold an http or https URL');
  const parsed = new URL(link);
  const mediaType =
    MEDIA_TYPES.find(([pattern]) => pattern.test(parsed.pathname))?.[1] ?? 'document';
  return { kind: 'media', mediaType, link, ...(caption ? { caption } : {}) };
}
