import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { AnswerXmlError } from './answer-xml-error.js';
import { ANSWER_XML_MAX_BYTES } from './answer-xml-defaults.js';

/** A parsed element. Names and attribute names keep their case; attribute values are raw strings. */
export interface XmlElement {
  readonly type: 'element';
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly children: readonly XmlNode[];
}

export interface XmlText {
  readonly type: 'text';
  /** Entities decoded, except inside elements kept raw (see `rawContentElements`). */
  readonly text: string;
}

export type XmlNode = XmlElement | XmlText;

const ROOT = 'Response';

/**
 * Parses a document into a tree whose root is returned. Elements named in `rawContentElements`
 * keep their content as one unparsed text node (markup and entities as written), which is how
 * SSML inside Speak survives. Values are never converted: `+14155550100` stays a string.
 */
export function parseXmlTree(document: string, rawContentElements: readonly string[]): XmlElement {
  const bytes = Buffer.byteLength(document, 'utf8');
  if (bytes > ANSWER_XML_MAX_BYTES) {
    throw new AnswerXmlError(
      ROOT,
      `document is ${bytes} bytes, over the limit of ${ANSWER_XML_MAX_BYTES} bytes`,
    );
  }
  // Entity declarations in a DTD are how entity-expansion attacks work; answer XML has no use for one.
  if (/<!DOCTYPE/i.test(document)) {
    throw new AnswerXmlError(ROOT, 'a DOCTYPE declaration is not allowed');
  }
  const verdict = XMLValidator.validate(document, { allowBooleanAttributes: false });
  if (verdict !== true) {
    const { msg, line, col } = verdict.err;
    throw new AnswerXmlError(ROOT, `XML does not parse (line ${line}, column ${col}): ${msg}`);
  }
  // The validator and parser both let text after a self-closing root element pass unseen.
  if (!endsWithMarkup(document)) {
    throw new AnswerXmlError(ROOT, 'text after the root element is not allowed');
  }
  const parser = new XMLParser({
    preserveOrder: true,
    ignoreAttributes: false,
    attributeNamePrefix: '',
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: false,
    ignoreDeclaration: true,
    ignorePiTags: true,
    stopNodes: rawContentElements.map((name) => `*.${name}`),
  });
  let parsed: unknown;
  try {
    parsed = parser.parse(document);
  } catch (error) {
    // The parser's own limits (nesting depth, for one) are the document's fault too.
    throw new AnswerXmlError(ROOT, `XML does not parse: ${(error as Error).message}`);
  }
  const top = toNodes(parsed);
  const elements = top.filter((n): n is XmlElement => n.type === 'element');
  const strayText = top.find((n) => n.type === 'text' && n.text.trim() !== '');
  if (elements.length !== 1 || strayText !== undefined) {
    throw new AnswerXmlError(ROOT, 'the document must have exactly one root element, <Response>');
  }
  const root = elements[0] as XmlElement;
  if (root.name !== ROOT) {
    throw new AnswerXmlError(ROOT, `the root element must be <Response>, got <${root.name}>`);
  }
  return root;
}

function endsWithMarkup(document: string): boolean {
  let rest = document.trimEnd();
  for (;;) {
    const start = rest.endsWith('-->')
      ? rest.lastIndexOf('<!--')
      : rest.endsWith('?>')
        ? rest.lastIndexOf('<?')
        : -1;
    if (start < 0) return rest.endsWith('>');
    rest = rest.slice(0, start).trimEnd();
  }
}

// With preserveOrder, fast-xml-parser yields an array of single-key objects: { Name: [...children],
// ':@': { attr: value } } for elements and { '#text': value } for text.
function toNodes(raw: unknown): XmlNode[] {
  if (!Array.isArray(raw)) return [];
  const nodes: XmlNode[] = [];
  for (const item of raw as unknown[]) {
    if (typeof item !== 'object' || item === null) continue;
    const entry = item as Record<string, unknown>;
    for (const [key, value] of Object.entries(entry)) {
      if (key === ':@') continue;
      if (key === '#text') {
        nodes.push({ type: 'text', text: String(value) });
      } else {
        nodes.push({
          type: 'element',
          name: key,
          attributes: toAttributes(entry[':@']),
          children: toNodes(value),
        });
      }
    }
  }
  return nodes;
}

function toAttributes(raw: unknown): Record<string, string> {
  const attributes: Record<string, string> = {};
  if (typeof raw !== 'object' || raw === null) return attributes;
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    Object.defineProperty(attributes, name, {
      value: String(value),
      enumerable: true,
      writable: false,
    });
  }
  return attributes;
}
