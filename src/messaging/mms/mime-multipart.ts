/**
 * The MIME of MM7 (RFC 2045, RFC 2046, RFC 2387): a multipart/related body whose root, the
 * entity its start parameter names, is the SOAP envelope, and whose content follows it, nested
 * as multipart/mixed when this module writes it:
 *
 *   --B
 *   Content-Type: text/xml; charset="utf-8"        Content-ID: <start>
 *     <env:Envelope> ...
 *   --B
 *   Content-Type: multipart/mixed; boundary="c=B"  Content-ID: <content>
 *     --c=B  image/png ...  --c=B  text/plain ...  --c=B--
 *   --B--
 *
 * Reading takes what MMSCs send: any nesting up to a limit, base64 and quoted-printable parts,
 * bare LF line ends. It throws Mm7Error for a body it cannot read; writing throws RangeError for
 * values it cannot write.
 */
import { randomBytes } from 'node:crypto';
import { Mm7Error } from './mm7-error.js';

/** A part of the content: a leaf of the MIME tree, its Content-Transfer-Encoding undone. */
export interface MimePart {
  contentType: string;
  /** Without the angle brackets of the Content-ID header; '' when the part has none. */
  contentId: string;
  body: Buffer;
  filename?: string;
}

/** The Content-IDs (without angle brackets) writeRelated gives the root and the content. */
export interface RelatedIds {
  /** The root entity's, named by the start parameter. */
  start: string;
  /** The multipart/mixed entity's that holds the parts. */
  content: string;
}

const MAX_NESTING = 4;

// ---- Writing ----------------------------------------------------------------------------------

/**
 * Writes an XML root and the content parts as a multipart/related HTTP body and its
 * Content-Type; a random boundary is chosen when none is given.
 */
export function writeRelated(
  xml: string,
  parts: readonly MimePart[],
  ids: RelatedIds,
  boundary?: string,
): { contentType: string; body: Buffer } {
  const entities = parts.map((p, i) => partEntity(p, `parts[${i}]`));
  const contentType = (b: string) =>
    `multipart/related; type="text/xml"; start="<${ids.start}>"; boundary="${b}"`;
  if (boundary !== undefined) {
    // RFC 2046 5.1.1 allows spaces too; leaving them out spares quoting trouble, and the length
    // leaves room for the "c=" of the nested content's boundary within the limit of 70.
    if (!/^[0-9A-Za-z'()+_,\-./:=?]{1,68}$/.test(boundary))
      throw new RangeError(
        `Expected 1 to 68 of the characters 0-9 A-Z a-z '()+_,-./:=? for boundary but received ${JSON.stringify(boundary)}`,
      );
    const body = relatedBody(xml, entities, ids, boundary);
    if (!body)
      throw new RangeError(`the boundary ${boundary} occurs inside the content: choose another`);
    return { contentType: contentType(boundary), body };
  }
  for (;;) {
    const random = `mm7-${randomBytes(12).toString('hex')}`;
    const body = relatedBody(xml, entities, ids, random);
    if (body) return { contentType: contentType(random), body };
  }
}

/** The whole HTTP body, or null when the boundary occurs in what it would enclose. */
function relatedBody(
  xml: string,
  entities: Buffer[],
  ids: RelatedIds,
  boundary: string,
): Buffer | null {
  const soap = writeEntity(
    [
      ['Content-Type', 'text/xml; charset="utf-8"'],
      ['Content-ID', `<${ids.start}>`],
      ['Content-Transfer-Encoding', '8bit'],
    ],
    Buffer.from(xml, 'utf8'),
  );
  if (entities.length === 0) return writeMultipart(boundary, [soap]);
  const inner = `c=${boundary}`;
  const mixed = writeMultipart(inner, entities);
  if (!mixed) return null;
  const content = writeEntity(
    [
      ['Content-Type', `multipart/mixed; boundary="${inner}"`],
      ['Content-ID', `<${ids.content}>`],
      ['Content-Transfer-Encoding', 'binary'],
    ],
    mixed,
  );
  return writeMultipart(boundary, [soap, content]);
}

function partEntity(part: MimePart, field: string): Buffer {
  const headers: [string, string][] = [
    ['Content-Type', headerValue(part.contentType, `${field}.contentType`)],
  ];
  const id = part.contentId.replace(/^<(.*)>$/, '$1');
  if (id !== '') headers.push(['Content-ID', `<${headerValue(id, `${field}.contentId`)}>`]);
  // RFC 2557: Content-Location is a URI, so a name with spaces or non-ASCII is percent-encoded.
  if (part.filename !== undefined) headers.push(['Content-Location', encodeURI(part.filename)]);
  headers.push(['Content-Transfer-Encoding', 'binary']);
  return writeEntity(headers, part.body);
}

function headerValue(value: string, field: string): string {
  if (value === '' || !/^[\x20-\x7e]+$/.test(value))
    throw new RangeError(
      `Expected printable ASCII for ${field} but received ${JSON.stringify(value)}`,
    );
  return value;
}

function writeEntity(headers: [string, string][], body: Buffer): Buffer {
  const head = headers.map(([name, value]) => `${name}: ${value}\r\n`).join('') + '\r\n';
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

function writeMultipart(boundary: string, entities: Buffer[]): Buffer | null {
  const delimiter = `--${boundary}`;
  if (entities.some((e) => e.includes(delimiter))) return null;
  // RFC 2046 5.1.1: the CRLF before each boundary line belongs to the boundary, not the part.
  const chunks: Buffer[] = [];
  for (const entity of entities)
    chunks.push(Buffer.from(`${delimiter}\r\n`), entity, Buffer.from('\r\n'));
  chunks.push(Buffer.from(`${delimiter}--\r\n`));
  return Buffer.concat(chunks);
}

// ---- Reading ----------------------------------------------------------------------------------

interface MimeEntity {
  /** Names in lower case (RFC 2045: they are case-insensitive). */
  headers: Map<string, string>;
  /** With its Content-Transfer-Encoding undone. */
  body: Buffer;
}

const XML_TYPES = ['text/xml', 'application/xml', 'application/soap+xml'];

/**
 * Reads an HTTP body, multipart/related or bare XML, into the text of its SOAP envelope (the
 * start part, else the first XML part) and the content after it, nested multiparts made flat.
 */
export function readRelated(contentType: string, body: Buffer): { xml: string; parts: MimePart[] } {
  const type = parseContentType(contentType);
  if (XML_TYPES.includes(type.type)) return { xml: xmlText(body, type), parts: [] };
  if (!type.type.startsWith('multipart/'))
    throw new Mm7Error(`expected a multipart/related body but the Content-Type is ${contentType}`);
  const entities = splitMultipart(body, boundaryOf(type, 'the HTTP body'), 'the HTTP body').map(
    (raw) => readEntity(raw, 'the HTTP body'),
  );
  const start = type.params.get('start');
  const soapIndex =
    start === undefined
      ? entities.findIndex((e) => XML_TYPES.includes(entityType(e).type))
      : entities.findIndex((e) => contentIdOf(e) === start.replace(/^<(.*)>$/, '$1'));
  const soap = entities[soapIndex];
  if (!soap)
    throw new Mm7Error(
      start === undefined
        ? 'the multipart body has no text/xml part, so no SOAP envelope'
        : `the multipart body has no part with Content-ID ${start}, the SOAP envelope its start parameter names`,
    );
  const soapType = entityType(soap);
  if (!XML_TYPES.includes(soapType.type))
    throw new Mm7Error(`the SOAP envelope part is ${soapType.type}, not text/xml`);
  const parts = entities.filter((_, i) => i !== soapIndex).flatMap((e) => contentParts(e, 1));
  return { xml: xmlText(soap.body, soapType), parts };
}

/** A multipart part gives its own parts, in order; the content is returned flat. */
function contentParts(entity: MimeEntity, depth: number): MimePart[] {
  const type = entityType(entity);
  if (type.type.startsWith('multipart/')) {
    const where = `the ${type.type} part <${contentIdOf(entity)}>`;
    if (depth > MAX_NESTING)
      throw new Mm7Error(`${where} nests multiparts more than ${MAX_NESTING} deep`);
    return splitMultipart(entity.body, boundaryOf(type, where), where)
      .map((raw) => readEntity(raw, where))
      .flatMap((e) => contentParts(e, depth + 1));
  }
  const disposition = entity.headers.get('content-disposition');
  const location = entity.headers.get('content-location');
  const filename =
    (location === undefined ? undefined : decodeUri(location)) ??
    (disposition === undefined
      ? undefined
      : parseContentType(disposition).params.get('filename')) ??
    type.params.get('name');
  return [
    {
      contentType: entity.headers.get('content-type') ?? 'text/plain; charset=us-ascii',
      contentId: contentIdOf(entity),
      body: Buffer.from(entity.body),
      ...(filename === undefined ? {} : { filename }),
    },
  ];
}

function decodeUri(value: string): string {
  try {
    return decodeURI(value);
  } catch {
    return value;
  }
}

function xmlText(body: Buffer, type: ContentType): string {
  const charset = type.params.get('charset')?.toLowerCase();
  return body.toString(charset === 'iso-8859-1' || charset === 'latin1' ? 'latin1' : 'utf8');
}

function entityType(entity: MimeEntity): ContentType {
  // RFC 2045 5.2: a part without a Content-Type is text/plain.
  return parseContentType(entity.headers.get('content-type') ?? 'text/plain');
}

function contentIdOf(entity: MimeEntity): string {
  return (entity.headers.get('content-id') ?? '').replace(/^<(.*)>$/, '$1');
}

function boundaryOf(type: ContentType, where: string): string {
  const boundary = type.params.get('boundary');
  if (!boundary) throw new Mm7Error(`${where} is ${type.type} without a boundary parameter`);
  return boundary;
}

const CR = 0x0d;
const LF = 0x0a;

/** The raw parts between the boundary lines; the preamble and epilogue are dropped. */
function splitMultipart(body: Buffer, boundary: string, where: string): Buffer[] {
  const delimiter = Buffer.from(`--${boundary}`, 'latin1');
  let line = findBoundaryLine(body, delimiter, 0);
  if (!line) throw new Mm7Error(`${where} has no --${boundary} boundary line`);
  const parts: Buffer[] = [];
  while (!line.last) {
    const next = findBoundaryLine(body, delimiter, line.end);
    if (!next) throw new Mm7Error(`${where} ends without its closing --${boundary}-- line`);
    parts.push(body.subarray(line.end, Math.max(line.end, next.start)));
    line = next;
  }
  return parts;
}

/**
 * RFC 2046 5.1.1: a boundary line starts a line, may end in "--" (the last one) and then in
 * spaces; the CRLF before it is part of it. A bare LF is taken for CRLF.
 */
function findBoundaryLine(
  body: Buffer,
  delimiter: Buffer,
  from: number,
): { start: number; end: number; last: boolean } | null {
  for (let at = body.indexOf(delimiter, from); at >= 0; at = body.indexOf(delimiter, at + 1)) {
    if (at > 0 && body[at - 1] !== LF) continue;
    let end = at + delimiter.length;
    const last = body[end] === 0x2d && body[end + 1] === 0x2d;
    if (last) end += 2;
    while (body[end] === 0x20 || body[end] === 0x09) end++;
    // Anything else after it makes it a longer boundary that starts the same way.
    if (end < body.length && body[end] !== CR && body[end] !== LF) continue;
    if (body[end] === CR) end++;
    if (body[end] === LF) end++;
    const start = at === 0 ? 0 : body[at - 2] === CR ? at - 2 : at - 1;
    return { start, end, last };
  }
  return null;
}

function readEntity(raw: Buffer, where: string): MimeEntity {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  let headEnd = raw.length;
  let bodyStart = raw.length;
  if (raw[0] === CR && raw[1] === LF) [headEnd, bodyStart] = [0, 2];
  else if (raw[0] === LF) [headEnd, bodyStart] = [0, 1];
  else if (crlf >= 0 && (lf < 0 || crlf < lf)) [headEnd, bodyStart] = [crlf, crlf + 4];
  else if (lf >= 0) [headEnd, bodyStart] = [lf, lf + 2];
  const headers = new Map<string, string>();
  // RFC 5322 2.2.3: a line starting with white space continues the header before it.
  const unfolded = raw
    .subarray(0, headEnd)
    .toString('latin1')
    .replace(/\r?\n[ \t]+/g, ' ');
  for (const line of unfolded.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    if (colon > 0 && !headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  const encoding = (headers.get('content-transfer-encoding') ?? '7bit').toLowerCase();
  const encoded = raw.subarray(bodyStart);
  switch (encoding) {
    case '7bit':
    case '8bit':
    case 'binary':
      return { headers, body: encoded };
    case 'base64':
      return { headers, body: Buffer.from(encoded.toString('latin1'), 'base64') };
    case 'quoted-printable':
      return { headers, body: decodeQuotedPrintable(encoded) };
    default:
      throw new Mm7Error(
        `a part of ${where} has the unknown Content-Transfer-Encoding ${encoding}`,
      );
  }
}

/** RFC 2045 6.7: "=XX" is a byte in hex, "=" at the end of a line joins it to the next. */
function decodeQuotedPrintable(data: Buffer): Buffer {
  const text = data.toString('latin1').replace(/=\r?\n/g, '');
  const bytes = text.replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) =>
    String.fromCharCode(parseInt(hex, 16)),
  );
  return Buffer.from(bytes, 'latin1');
}

interface ContentType {
  /** Lower case, without parameters. */
  type: string;
  /** Names in lower case, quoted values unquoted. */
  params: Map<string, string>;
}

function parseContentType(value: string): ContentType {
  const semicolon = value.indexOf(';');
  const type = (semicolon < 0 ? value : value.slice(0, semicolon)).trim().toLowerCase();
  const params = new Map<string, string>();
  if (semicolon < 0) return { type, params };
  const param = /;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;]*))/g;
  for (const [, name, quoted, token] of value.slice(semicolon).matchAll(param))
    params.set(name!.toLowerCase(), quoted?.replace(/\\(.)/g, '$1') ?? token ?? '');
  return { type, params };
}
