/**
 * The XML of MM7's SOAP 1.1 envelopes: a writer of escaped elements, and a tolerant reader that
 * finds elements by local name, whatever namespace prefix an MMSC gives them. The reader throws
 * Mm7Error for XML it cannot read; the writer throws RangeError for text XML cannot carry.
 */
import { Mm7Error } from './mm7-error.js';

// ---- Writing ----------------------------------------------------------------------------------

/** Writes an element; text content is escaped, child elements are passed already written. */
export function xmlElement(
  name: string,
  content: string | string[],
  attributes: Record<string, string> = {},
): string {
  const attrs = Object.entries(attributes)
    .map(([key, value]) => ` ${key}="${escapeXml(value)}"`)
    .join('');
  const inner = typeof content === 'string' ? escapeXml(content) : content.join('');
  return `<${name}${attrs}>${inner}</${name}>`;
}

/** Writes an element holding `value` as text, or nothing ('') when the value is undefined. */
export function optionalXmlElement(name: string, value: string | undefined): string {
  return value === undefined ? '' : xmlElement(name, value);
}

const XML_ESCAPES = new Map([
  ['&', '&amp;'],
  ['<', '&lt;'],
  ['>', '&gt;'],
  ['"', '&quot;'],
  ["'", '&apos;'],
]);

function escapeXml(text: string): string {
  // XML 1.0 section 2.2: these characters cannot appear in a document, even escaped.
  const bad = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/.exec(text);
  if (bad)
    throw new RangeError(
      `Expected text XML 1.0 can carry but received U+${bad[0].charCodeAt(0).toString(16).padStart(4, '0')} in ${JSON.stringify(text)}`,
    );
  return text.replace(/[&<>"']/g, (c) => XML_ESCAPES.get(c)!);
}

// ---- Reading ----------------------------------------------------------------------------------

/** An element by its local name (the namespace prefix dropped); `text` is its own text. */
export interface XmlElement {
  name: string;
  attributes: Map<string, string>;
  children: XmlElement[];
  text: string;
}

const XML_TOKEN =
  /<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!\[CDATA\[([\s\S]*?)\]\]>|(<!DOCTYPE)|<\/([^\s>]+)\s*>|<([^\s/>!?][^\s/>]*)((?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|([^<]+)|</g;
const XML_ATTRIBUTE = /([^\s=/>]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

/**
 * Reads a document into a nameless root element whose children are its top-level elements.
 *
 * A small reader for the SOAP that MMSCs send: elements, attributes, text, CDATA, comments. It
 * does not check namespaces: elements are found by local name, whatever prefix they carry.
 */
export function parseXml(xml: string): XmlElement {
  const root: XmlElement = { name: '', attributes: new Map(), children: [], text: '' };
  const open = [root];
  for (const token of xml.matchAll(XML_TOKEN)) {
    const [whole, cdata, doctype, close, name, attributes, selfClosing, text] = token;
    const current = open[open.length - 1]!;
    if (text !== undefined) current.text += unescapeXml(text);
    else if (cdata !== undefined) current.text += cdata;
    else if (doctype !== undefined)
      throw new Mm7Error('SOAP 1.1 section 3: a SOAP message MUST NOT contain a DOCTYPE');
    else if (close !== undefined) {
      if (open.length === 1 || localName(close) !== current.name)
        throw new Mm7Error(`the XML is not well formed: </${close}> does not close an element`);
      open.pop();
    } else if (name !== undefined) {
      const element: XmlElement = {
        name: localName(name),
        attributes: new Map(),
        children: [],
        text: '',
      };
      for (const [, key, double, single] of (attributes ?? '').matchAll(XML_ATTRIBUTE))
        element.attributes.set(localName(key!), unescapeXml(double ?? single ?? ''));
      current.children.push(element);
      if (selfClosing === '') open.push(element);
    } else if (whole === '<')
      throw new Mm7Error(`the XML is not well formed at offset ${token.index}`);
  }
  if (open.length > 1) throw new Mm7Error(`the XML ends inside <${open[open.length - 1]!.name}>`);
  return root;
}

function localName(qualified: string): string {
  return qualified.slice(qualified.indexOf(':') + 1);
}

const XML_ENTITIES = new Map([
  ['lt', '<'],
  ['gt', '>'],
  ['amp', '&'],
  ['quot', '"'],
  ['apos', "'"],
]);

function unescapeXml(text: string): string {
  return text.replace(/&(#x[0-9A-Fa-f]+|#\d+|lt|gt|amp|quot|apos);/g, (whole, entity: string) => {
    if (!entity.startsWith('#')) return XML_ENTITIES.get(entity)!;
    const code = entity[1] === 'x' ? parseInt(entity.slice(2), 16) : Number(entity.slice(1));
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

/** The first child element with this local name, if any. */
export function child(parent: XmlElement, name: string): XmlElement | undefined {
  return parent.children.find((c) => c.name === name);
}

/** The first child element with this local name, or an Mm7Error "<where> has no <name>". */
export function requiredChild(parent: XmlElement, name: string, where = parent.name): XmlElement {
  const found = child(parent, name);
  if (!found) throw new Mm7Error(`${where} has no ${name}`);
  return found;
}

/** The first element with this local name at any depth below the parent, depth first. */
export function descendant(parent: XmlElement, name: string): XmlElement | undefined {
  for (const c of parent.children) {
    const found = c.name === name ? c : descendant(c, name);
    if (found) return found;
  }
  return undefined;
}

/** The trimmed text of the named child element, if there is one. */
export function optionalText(parent: XmlElement, name: string): string | undefined {
  return child(parent, name)?.text.trim();
}

/** The trimmed text of the named child element, or an Mm7Error when it is missing or empty. */
export function requiredText(parent: XmlElement, name: string, where = parent.name): string {
  const text = optionalText(parent, name);
  if (!text) throw new Mm7Error(`${where} has no ${name}`);
  return text;
}

// ---- SOAP 1.1 envelope ------------------------------------------------------------------------

/** The Body of the SOAP envelope a parsed document holds, or an Mm7Error when it holds none. */
export function soapBodyOf(root: XmlElement): XmlElement {
  const envelope = root.children.find((c) => c.name === 'Envelope');
  const body = envelope && child(envelope, 'Body');
  if (!body) throw new Mm7Error('the XML is not a SOAP envelope with a Body');
  return body;
}

/** The named element in the SOAP Body, or an Mm7Error saying what the Body holds instead. */
export function soapBodyElement(root: XmlElement, name: string): XmlElement {
  const body = soapBodyOf(root);
  const found = child(body, name);
  if (!found)
    throw new Mm7Error(`the SOAP Body holds ${body.children[0]?.name ?? 'nothing'}, not ${name}`);
  return found;
}
