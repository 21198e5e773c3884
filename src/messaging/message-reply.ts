import { XMLParser, XMLValidator } from 'fast-xml-parser';

/** One `<Message>` of a message_url's answer: a reply to send. */
export interface MessageReply {
  src: string | null;
  dst: string | null;
  type: string;
  text: string;
  callbackUrl: string | null;
  callbackMethod: string | null;
}

const MAX_REPLIES = 10;

/**
 * The `<Message>` elements of `<Response>...</Response>` (wire-compat-messaging.md, Incoming
 * messages). An empty or non-XML answer has none; an answer that is XML but not a valid
 * Response throws with the reason.
 */
export function parseMessageReplies(body: string): MessageReply[] {
  const document = body.trim();
  if (!document.startsWith('<')) return [];
  if (/<!DOCTYPE/i.test(document)) throw new Error('a DOCTYPE declaration is not allowed');
  const verdict = XMLValidator.validate(document);
  if (verdict !== true) throw new Error(`XML does not parse: ${verdict.err.msg}`);
  const parsed = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    parseTagValue: false,
    parseAttributeValue: false,
    ignoreDeclaration: true,
    isArray: (name) => name === 'Message',
  }).parse(document) as Record<string, unknown>;
  const response = parsed.Response;
  if (response === undefined) throw new Error('the root element must be <Response>');
  if (typeof response !== 'object' || response === null) return [];
  const messages = ((response as Record<string, unknown>).Message ?? []) as unknown[];
  if (messages.length > MAX_REPLIES)
    throw new Error(`at most ${MAX_REPLIES} <Message> elements are sent in reply`);
  return messages.map((m) => {
    const element = (typeof m === 'object' && m !== null ? m : { '#text': String(m) }) as Record<
      string,
      string
    >;
    return {
      src: element.src ?? null,
      dst: element.dst ?? null,
      type: element.type ?? 'sms',
      text: element['#text'] ?? '',
      callbackUrl: element.callbackUrl ?? null,
      callbackMethod: element.callbackMethod ?? null,
    };
  });
}
