/** What a delivery receipt says about one submitted part. */
export interface DeliveryReceipt {
  /** The carrier's message id of the part, as the receipt wrote it. */
  messageId: string;
  /** DELIVRD, EXPIRED, DELETED, UNDELIV, ACCEPTD, UNKNOWN, REJECTD, ENROUTE, ACKED, BUFFRED. */
  stat: string;
  /** pending: not a final outcome (en route, accepted, buffered). */
  outcome: 'delivered' | 'undelivered' | 'pending';
  /** The messaging error code (wire-compat-messaging.md): '000' when delivered. */
  errorCode: string;
  /** The receipt's `err` field or network error code, as given. */
  err: string | null;
  doneDate: Date | null;
}

/** wire-compat-messaging.md: message_state TLV values 1 to 8. */
const STATE_STAT: Record<number, string> = {
  1: 'ENROUTE',
  2: 'DELIVRD',
  3: 'EXPIRED',
  4: 'DELETED',
  5: 'UNDELIV',
  6: 'ACCEPTD',
  7: 'UNKNOWN',
  8: 'REJECTD',
};

/**
 * The messaging error code of a final `stat` when no network error says more: EXPIRED is the
 * destination not reachable within the validity period (80, temporarily unavailable); DELETED
 * and REJECTD are the carrier's refusal (100); UNDELIV is a permanent failure (70); UNKNOWN 1000.
 */
export const STAT_ERROR_CODES: Readonly<Record<string, string>> = {
  DELIVRD: '000',
  EXPIRED: '80',
  DELETED: '100',
  UNDELIV: '70',
  REJECTD: '100',
  UNKNOWN: '1000',
};

/**
 * GSM MAP error codes (3GPP TS 29.002) as carriers put them in `err:` or the network_error_code
 * TLV (type 3), to the messaging error codes: unknown subscriber → 50 invalid destination;
 * absent or busy subscriber, memory full → 80 temporarily unavailable; barred → 100 prohibited;
 * not provisioned, illegal subscriber or equipment → 70 permanently unavailable; delivery and
 * system failures → 20 network error.
 */
export const GSM_ERROR_CODES: Readonly<Record<number, string>> = {
  1: '50',
  5: '50',
  6: '80',
  9: '70',
  11: '70',
  12: '70',
  13: '100',
  21: '70',
  27: '80',
  31: '80',
  32: '20',
  33: '80',
  34: '20',
  35: '20',
  36: '20',
};

const PENDING = new Set(['ENROUTE', 'ACCEPTD', 'ACKED', 'BUFFRED']);

export interface ReceiptInput {
  /** The short_message as text (receipts are ASCII). */
  text: string;
  receiptedMessageId?: string;
  messageState?: number;
  /** The network_error_code TLV: network type (1 octet) and error (2 octets). */
  networkErrorCode?: Buffer;
}

/**
 * Reads a delivery receipt: the TLVs receipted_message_id and message_state when present,
 * otherwise the text `id:... sub:... dlvrd:... submit date:... done date:... stat:... err:...`.
 * null when neither looks like a receipt.
 */
export function parseDeliveryReceipt(input: ReceiptInput): DeliveryReceipt | null {
  const fields = receiptFields(input.text);
  const messageId = (input.receiptedMessageId ?? fields.id ?? '').trim();
  const stat = (
    (input.messageState !== undefined ? STATE_STAT[input.messageState] : undefined) ??
    fields.stat ??
    ''
  ).toUpperCase();
  if (messageId === '' || stat === '') return null;
  const network = networkError(input.networkErrorCode);
  const err = network ?? fields.err ?? null;
  let outcome: DeliveryReceipt['outcome'] = 'undelivered';
  if (stat === 'DELIVRD') outcome = 'delivered';
  else if (PENDING.has(stat)) outcome = 'pending';
  let errorCode = '000';
  if (outcome === 'undelivered') {
    const gsm = err !== null && /^\d+$/.test(err) ? GSM_ERROR_CODES[Number(err)] : undefined;
    errorCode = gsm ?? STAT_ERROR_CODES[stat] ?? '1000';
  }
  return { messageId, stat, outcome, errorCode, err, doneDate: receiptDate(fields.done) };
}

/** The key:value fields of a receipt text, keys lower case (`submit date` and `submit_date`). */
function receiptFields(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  const pattern = /(id|sub|dlvrd|submit[ _]date|done[ _]date|stat|err|text)\s*:\s*(\S*)/gi;
  for (const match of text.matchAll(pattern)) {
    const key = match[1]!.toLowerCase().replace(/[ _]date$/, '');
    if (!(key in fields)) fields[key] = match[2]!;
  }
  return fields;
}

function networkError(tlv: Buffer | undefined): string | null {
  if (!tlv || tlv.length < 3) return null;
  const code = tlv.readUInt16BE(1);
  return code === 0 ? null : String(code);
}

/** `YYMMDDhhmm[ss]` in UTC (SMPP 3.4 appendix B). */
function receiptDate(value: string | undefined): Date | null {
  const match = value ? /^(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)?$/.exec(value) : null;
  if (!match) return null;
  const [, yy, mo, dd, hh, mi, ss] = match;
  return new Date(
    Date.UTC(
      2000 + Number(yy),
      Number(mo) - 1,
      Number(dd),
      Number(hh),
      Number(mi),
      Number(ss ?? 0),
    ),
  );
}

/**
 * The keys a carrier message id is matched under, tolerant of hex or decimal, leading zeros
 * and case: the canonical form first (what a sent id is stored under), then the same number
 * written the other way.
 */
export function messageIdKeys(id: string): string[] {
  const canonical = id
    .trim()
    .toLowerCase()
    .replace(/^0+(?=.)/, '');
  const keys = [canonical];
  if (/^\d+$/.test(canonical)) keys.push(BigInt(canonical).toString(16));
  if (/^[0-9a-f]+$/.test(canonical) && canonical.length <= 32)
    keys.push(BigInt(`0x${canonical}`).toString(10));
  return [...new Set(keys)];
}
