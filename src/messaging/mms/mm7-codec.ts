/**
 * MM7 (3GPP TS 23.140): the interface between an MMS Relay/Server (MMSC) and a value-added
 * service (VAS) application, SOAP 1.1 over HTTP. A request that carries content is a
 * multipart/related body, the SOAP envelope first and the message content after it:
 *
 *   Content-Type: multipart/related; type="text/xml"; start="<soap-start>"; boundary="B"
 *
 *   --B
 *   Content-Type: text/xml; charset="utf-8"        Content-ID: <soap-start>
 *     <env:Envelope>  Header: mm7:TransactionID
 *                     Body:   SubmitReq ... <Content href="cid:mms-content"/>
 *   --B
 *   Content-Type: multipart/mixed; boundary="c=B"  Content-ID: <mms-content>
 *     --c=B  image/png, Content-ID <img1>  ...  --c=B  text/plain ...  --c=B--
 *   --B--
 *
 * Responses, and requests without content (DeliveryReportReq), are a bare text/xml envelope.
 * This module only turns values into bytes and back; HTTP, credentials and retries are the
 * caller's.
 */
import { readRelated, writeRelated, type MimePart, type RelatedIds } from './mime-multipart.js';
import { Mm7Error } from './mm7-error.js';
import {
  child,
  descendant,
  optionalText,
  optionalXmlElement,
  parseXml,
  requiredChild,
  requiredText,
  soapBodyElement,
  soapBodyOf,
  xmlElement,
  type XmlElement,
} from './soap-xml.js';

export { Mm7Error };

export const MM7_NAMESPACE =
  'http://www.3gpp.org/ftp/Specs/archive/23_series/23.140/schema/REL-6-MM7-1-4';
export const SOAP_ENVELOPE_NAMESPACE = 'http://schemas.xmlsoap.org/soap/envelope/';
/** The version of TS 23.140 the REL-6-MM7-1-4 schema was published with, sent in MM7Version. */
export const MM7_VERSION = '6.8.0';

/** TS 23.140 status codes. A code missing here takes the text of its class (x000). */
export const MM7_STATUS_TEXT: ReadonlyMap<number, string> = new Map([
  [1000, 'Success'],
  [1100, 'Partial success'],
  [2000, 'Client error'],
  [2001, 'Operation restricted'],
  [2002, 'Address Error'],
  [2003, 'Address Not Found'],
  [2004, 'Multimedia content refused'],
  [2005, 'Message ID Not found'],
  [2006, 'LinkedID not found'],
  [2007, 'Message format corrupt'],
  [2008, 'Application ID not found'],
  [2009, 'Reply Application ID not found'],
  [3000, 'Server Error'],
  [3001, 'Not Possible'],
  [3002, 'Message rejected'],
  [3003, 'Multiple addresses not supported'],
  [3004, 'Application Addressing not supported'],
  [4000, 'General service error'],
  [4001, 'Improper identification'],
  [4002, 'Unsupported version'],
  [4003, 'Unsupported operation'],
  [4004, 'Validation error'],
  [4005, 'Service error'],
  [4006, 'Service unavailable'],
  [4007, 'Service denied'],
  [4008, 'Application denied'],
]);

/** The MMStatus values of a DeliveryReportReq. */
export const MM_STATUS = [
  'Expired',
  'Retrieved',
  'Rejected',
  'Indeterminate',
  'Forwarded',
  'Unrecognised',
  'Deferred',
  'DeliveryConditionNotMet',
] as const;

/** A part of the content of a SubmitReq or DeliverReq. */
export type Mm7Part = MimePart;

export interface SubmitReq {
  transactionId: string;
  vaspId?: string;
  vasId?: string;
  /** E.164 digits, written as +digits in <Number>. */
  senderAddress: string;
  /** E.164 digits. */
  recipients: string[];
  subject?: string;
  deliveryReport: boolean;
  /** Written as a relative ExpiryDate (PT3600S). */
  expirySeconds?: number;
  parts: Mm7Part[];
}

export interface SubmitRsp {
  transactionId: string;
  statusCode: number;
  statusText: string;
  messageId?: string;
}

export interface DeliveryReportReq {
  transactionId: string;
  messageId: string;
  recipient: string;
  sender?: string;
  date?: string;
  mmStatus: string;
  statusText?: string;
}

export interface DeliverReq {
  transactionId: string;
  sender: string;
  recipients: string[];
  subject?: string;
  linkedId?: string;
  parts: Mm7Part[];
}

export type Mm7Kind =
  | 'SubmitReq'
  | 'SubmitRsp'
  | 'DeliveryReportReq'
  | 'DeliverReq'
  | 'DeliveryReportRsp'
  | 'DeliverRsp'
  | 'unknown';

/** TS 23.140: status codes of class 1xxx (1000 Success, 1100 Partial success) are successes. */
export function mm7StatusSucceeded(statusCode: number): boolean {
  return statusCode >= 1000 && statusCode < 2000;
}

/** The Content-IDs of the SOAP envelope and of the content in a multipart/related body. */
const RELATED_IDS: RelatedIds = { start: 'soap-start', content: 'mms-content' };

// ---- Writing ----------------------------------------------------------------------------------

export function encodeSubmitReq(
  req: SubmitReq,
  boundary?: string,
): { contentType: string; body: Buffer } {
  const sender = e164(req.senderAddress, 'senderAddress');
  if (req.recipients.length === 0)
    throw new RangeError('Expected at least one recipient but received none');
  const to = req.recipients.map((r, i) =>
    xmlElement('To', [xmlElement('Number', `+${e164(r, `recipients[${i}]`)}`)]),
  );
  const expiry = req.expirySeconds;
  if (expiry !== undefined && !(Number.isInteger(expiry) && expiry > 0))
    throw new RangeError(`Expected a positive integer for expirySeconds but received ${expiry}`);
  const body = xmlElement(
    'SubmitReq',
    [
      xmlElement('MM7Version', MM7_VERSION),
      xmlElement('SenderIdentification', [
        optionalXmlElement('VASPID', req.vaspId),
        optionalXmlElement('VASID', req.vasId),
        xmlElement('SenderAddress', [xmlElement('Number', `+${sender}`)]),
      ]),
      xmlElement('Recipients', to),
      optionalXmlElement('ExpiryDate', expiry === undefined ? undefined : `PT${expiry}S`),
      xmlElement('DeliveryReport', String(req.deliveryReport)),
      optionalXmlElement('Subject', req.subject),
      contentReference(req.parts),
    ],
    { xmlns: MM7_NAMESPACE },
  );
  return writeRelated(envelope(req.transactionId, body), req.parts, RELATED_IDS, boundary);
}

export function encodeSubmitRsp(rsp: SubmitRsp): string {
  return response(
    rsp.transactionId,
    'SubmitRsp',
    rsp.statusCode,
    rsp.statusText,
    optionalXmlElement('MessageID', rsp.messageId),
  );
}

export function encodeDeliveryReportReq(req: DeliveryReportReq): string {
  if (!(MM_STATUS as readonly string[]).includes(req.mmStatus))
    throw new RangeError(
      `Expected one of ${MM_STATUS.join(', ')} for mmStatus but received ${req.mmStatus}`,
    );
  const body = xmlElement(
    'DeliveryReportReq',
    [
      xmlElement('MM7Version', MM7_VERSION),
      xmlElement('MessageID', req.messageId),
      xmlElement('Recipient', [addressElement(req.recipient)]),
      req.sender === undefined ? '' : xmlElement('Sender', [addressElement(req.sender)]),
      optionalXmlElement('Date', req.date),
      xmlElement('MMStatus', req.mmStatus),
      optionalXmlElement('StatusText', req.statusText),
    ],
    { xmlns: MM7_NAMESPACE },
  );
  return envelope(req.transactionId, body);
}

export function encodeDeliveryReportRsp(transactionId: string, statusCode = 1000): string {
  return response(transactionId, 'DeliveryReportRsp', statusCode);
}

export function encodeDeliverReq(
  req: DeliverReq,
  boundary?: string,
): { contentType: string; body: Buffer } {
  const body = xmlElement(
    'DeliverReq',
    [
      xmlElement('MM7Version', MM7_VERSION),
      optionalXmlElement('LinkedID', req.linkedId),
      xmlElement('Sender', [addressElement(req.sender)]),
      xmlElement(
        'Recipients',
        req.recipients.map((r) => xmlElement('To', [addressElement(r)])),
      ),
      optionalXmlElement('Subject', req.subject),
      contentReference(req.parts),
    ],
    { xmlns: MM7_NAMESPACE },
  );
  return writeRelated(envelope(req.transactionId, body), req.parts, RELATED_IDS, boundary);
}

export function encodeDeliverRsp(transactionId: string, statusCode = 1000): string {
  return response(transactionId, 'DeliverRsp', statusCode);
}

function envelope(transactionId: string, body: string): string {
  if (transactionId === '') throw new RangeError('Expected a transactionId but received ""');
  const id = xmlElement('mm7:TransactionID', transactionId, {
    'xmlns:mm7': MM7_NAMESPACE,
    'env:mustUnderstand': '1',
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<env:Envelope xmlns:env="${SOAP_ENVELOPE_NAMESPACE}">`,
    `<env:Header>${id}</env:Header>`,
    `<env:Body>${body}</env:Body>`,
    '</env:Envelope>',
  ].join('\r\n');
}

function response(
  transactionId: string,
  name: string,
  statusCode: number,
  statusText = statusTextOf(statusCode),
  extra = '',
): string {
  if (!Number.isInteger(statusCode) || statusCode < 1000 || statusCode > 9999)
    throw new RangeError(`Expected a four-digit MM7 status code but received ${statusCode}`);
  const status = xmlElement('Status', [
    xmlElement('StatusCode', String(statusCode)),
    xmlElement('StatusText', statusText),
  ]);
  const body = [xmlElement('MM7Version', MM7_VERSION), status, extra];
  return envelope(transactionId, xmlElement(name, body, { xmlns: MM7_NAMESPACE }));
}

function statusTextOf(code: number): string {
  return MM7_STATUS_TEXT.get(code) ?? MM7_STATUS_TEXT.get(Math.floor(code / 1000) * 1000) ?? '';
}

function contentReference(parts: readonly Mm7Part[]): string {
  return parts.length === 0
    ? ''
    : `<Content href="cid:${RELATED_IDS.content}" allowAdaptations="true"/>`;
}

function e164(value: string, field: string): string {
  if (!/^\+?\d{1,15}$/.test(value))
    throw new RangeError(
      `Expected E.164 digits for ${field} but received ${JSON.stringify(value)}`,
    );
  return value.replace(/^\+/, '');
}

/** An address by its form: user@host is RFC2822Address, digits a Number, the rest a ShortCode. */
function addressElement(address: string): string {
  if (address.includes('@')) return xmlElement('RFC2822Address', address);
  if (/^\+?\d+$/.test(address)) return xmlElement('Number', `+${address.replace(/^\+/, '')}`);
  return xmlElement('ShortCode', address);
}

// ---- Reading ----------------------------------------------------------------------------------

export function parseSubmitReq(contentType: string, body: Buffer): SubmitReq {
  const { root, parts } = readSoapWithContent(contentType, body);
  const transactionId = transactionIdOf(root);
  const req = soapBodyElement(root, 'SubmitReq');
  const identification = child(req, 'SenderIdentification');
  const senderAddress = identification && child(identification, 'SenderAddress');
  if (!senderAddress) throw new Mm7Error('SubmitReq has no SenderIdentification/SenderAddress');
  const recipients = recipientsOf(req);
  if (recipients.length === 0) throw new Mm7Error('SubmitReq has no Recipients');
  const expiry = optionalText(req, 'ExpiryDate');
  return {
    transactionId,
    vaspId: identification && optionalText(identification, 'VASPID'),
    vasId: identification && optionalText(identification, 'VASID'),
    senderAddress: requiredAddress(senderAddress, 'SubmitReq SenderAddress'),
    recipients,
    subject: child(req, 'Subject')?.text,
    deliveryReport: /^(true|1)$/.test(optionalText(req, 'DeliveryReport') ?? ''),
    // An absolute ExpiryDate cannot become seconds without a clock, so it is not carried.
    expirySeconds: expiry === undefined ? undefined : durationSeconds(expiry),
    parts,
  };
}

/** 1000 and 1100 are successes; any other code is kept with its text for the caller to judge. */
export function parseSubmitRsp(xml: string): SubmitRsp {
  const root = parseXml(xml);
  const fault = child(soapBodyOf(root), 'Fault');
  // TS 23.140: errors of class 4xxx come as a SOAP Fault whose detail holds an RSErrorRsp.
  const rsp = fault
    ? (descendant(fault, 'RSErrorRsp') ?? faultError(fault))
    : soapBodyElement(root, 'SubmitRsp');
  return {
    transactionId: transactionIdOf(root),
    ...statusOf(rsp),
    messageId: optionalText(rsp, 'MessageID'),
  };
}

function faultError(fault: XmlElement): never {
  const reason = [optionalText(fault, 'faultcode'), optionalText(fault, 'faultstring')];
  throw new Mm7Error(`the MMSC answered with a SOAP Fault: ${reason.join(' ').trim()}`);
}

export function parseDeliveryReportReq(xml: string): DeliveryReportReq {
  const root = parseXml(xml);
  const transactionId = transactionIdOf(root);
  const req = soapBodyElement(root, 'DeliveryReportReq');
  const sender = child(req, 'Sender');
  return {
    transactionId,
    messageId: requiredText(req, 'MessageID'),
    recipient: requiredAddress(requiredChild(req, 'Recipient'), 'DeliveryReportReq Recipient'),
    sender: sender && requiredAddress(sender, 'DeliveryReportReq Sender'),
    date: optionalText(req, 'Date'),
    mmStatus: requiredText(req, 'MMStatus'),
    statusText: child(req, 'StatusText')?.text,
  };
}

export function parseDeliverReq(contentType: string, body: Buffer): DeliverReq {
  const { root, parts } = readSoapWithContent(contentType, body);
  const transactionId = transactionIdOf(root);
  const req = soapBodyElement(root, 'DeliverReq');
  return {
    transactionId,
    sender: requiredAddress(requiredChild(req, 'Sender'), 'DeliverReq Sender'),
    recipients: recipientsOf(req),
    subject: child(req, 'Subject')?.text,
    linkedId: optionalText(req, 'LinkedID'),
    parts,
  };
}

/**
 * The MM7 message in a SOAP body, from the envelope's XML or from a whole multipart body read as
 * text (the envelope comes before the content). Never throws.
 */
export function mm7RequestKind(xml: string): Mm7Kind {
  const body = /<(?:[\w.-]+:)?Body[\s>]/.exec(xml);
  if (!body) return 'unknown';
  const first = /<(?![!?])(\/?)(?:[\w.-]+:)?([\w.-]+)/g;
  first.lastIndex = body.index + body[0].length;
  const found = first.exec(xml);
  const kinds: readonly Mm7Kind[] = [
    'SubmitReq',
    'SubmitRsp',
    'DeliveryReportReq',
    'DeliverReq',
    'DeliveryReportRsp',
    'DeliverRsp',
  ];
  const name = found && found[1] === '' ? found[2] : undefined;
  return kinds.find((k) => k === name) ?? 'unknown';
}

function statusOf(rsp: XmlElement): { statusCode: number; statusText: string } {
  const where = rsp.name;
  const status = requiredChild(rsp, 'Status', where);
  const code = requiredText(status, 'StatusCode', `${where} Status`);
  if (!/^\d+$/.test(code)) throw new Mm7Error(`${where} StatusCode ${code} is not a number`);
  const statusCode = Number(code);
  return { statusCode, statusText: child(status, 'StatusText')?.text ?? statusTextOf(statusCode) };
}

function recipientsOf(req: XmlElement): string[] {
  const recipients = child(req, 'Recipients');
  return recipients ? recipients.children.flatMap(addressesIn) : [];
}

/** The addresses in To, Cc, Bcc, Sender... Display-only ones are not anyone to deliver to. */
function addressesIn(container: XmlElement): string[] {
  const addresses = container.children.filter(
    (c) =>
      ['Number', 'RFC2822Address', 'ShortCode'].includes(c.name) &&
      c.attributes.get('displayOnly') !== 'true',
  );
  // Some MMSCs write the address straight in the container, without Number or ShortCode.
  const bare = container.text.trim();
  if (container.children.length === 0 && bare !== '')
    return [/^\+\d+$/.test(bare) ? bare.slice(1) : bare];
  return addresses.map((a) =>
    a.name === 'Number' ? a.text.trim().replace(/^\+/, '') : a.text.trim(),
  );
}

function requiredAddress(container: XmlElement, where: string): string {
  const address = addressesIn(container)[0];
  if (address === undefined || address === '')
    throw new Mm7Error(`${where} holds no Number, RFC2822Address or ShortCode`);
  return address;
}

/** PnDTnHnMnS; years and months have no fixed length in seconds, so they are not read. */
function durationSeconds(value: string): number | undefined {
  const m = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(value);
  if (!m || value === 'P' || value.endsWith('T')) return undefined;
  const [days, hours, minutes, seconds] = m.slice(1).map((n) => Number(n ?? 0));
  return days! * 86400 + hours! * 3600 + minutes! * 60 + Math.round(seconds!);
}

function transactionIdOf(root: XmlElement): string {
  const header = descendant(root, 'Header');
  const id = header && descendant(header, 'TransactionID')?.text.trim();
  if (!id) throw new Mm7Error('the SOAP Header holds no mm7:TransactionID');
  return id;
}

/** The SOAP envelope of a request body, multipart/related or bare XML, and the content after it. */
function readSoapWithContent(
  contentType: string,
  body: Buffer,
): { root: XmlElement; parts: Mm7Part[] } {
  const { xml, parts } = readRelated(contentType, body);
  return { root: parseXml(xml), parts };
}
