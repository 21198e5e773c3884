import { httpExchange } from '../../callbacks/http-exchange.js';
import type { Mm7Settings } from '../../config/config.js';
import type { PartOutcome } from '../carrier-network.js';
import { encodeSubmitReq, Mm7Error, parseSubmitRsp } from './mm7-codec.js';
import { refused, type MmsCarrier, type OutboundMms } from './mms-carrier.js';

/** The carrier name MMS over MM7 are recorded with, and their MMSC message ids kept under. */
export const MM7_CARRIER = 'mm7';
const SUBMIT_TIMEOUT_MS = 30_000;
/** TS 23.140: 1000 Success, 1100 Partial success. */
const ACCEPTED = new Set([1000, 1100]);

/** MMS to an MMSC over MM7 (3GPP TS 23.140): one SubmitReq per message, HTTP Basic auth. */
export class Mm7Carrier implements MmsCarrier {
  readonly name = MM7_CARRIER;

  constructor(private readonly mm7: Mm7Settings) {}

  async submit(message: OutboundMms): Promise<PartOutcome> {
    const { contentType, body } = encodeSubmitReq({
      transactionId: message.id,
      ...(this.mm7.vaspId ? { vaspId: this.mm7.vaspId } : {}),
      ...(this.mm7.vasId ? { vasId: this.mm7.vasId } : {}),
      senderAddress: message.source,
      recipients: [message.destination],
      deliveryReport: true,
      expirySeconds: message.expirySeconds,
      parts: message.parts.map((part, k) => ({
        contentType: part.contentType,
        contentId: `part${k}`,
        body: part.body,
        ...(part.fileName ? { filename: part.fileName } : {}),
      })),
    });
    const credentials = Buffer.from(`${this.mm7.username}:${this.mm7.password}`).toString('base64');
    const result = await httpExchange(
      {
        url: new URL(this.mm7.url),
        method: 'POST',
        headers: {
          'Content-Type': contentType,
          SOAPAction: '""',
          Authorization: `Basic ${credentials}`,
        },
        body,
      },
      // The operator's MMSC (VOXGATE_MMS_MM7_URL), not a tenant's URL.
      { timeoutMs: SUBMIT_TIMEOUT_MS, readBody: { maxBytes: 256 * 1024 }, guard: null },
    );
    if (!result.ok)
      return refused(
        `the MMSC could not be reached: ${'status' in result ? `HTTP ${result.status}` : result.error}`,
      );
    try {
      const answer = parseSubmitRsp(result.body?.toString('utf8') ?? '');
      if (!ACCEPTED.has(answer.statusCode) || !answer.messageId)
        return refused(`the MMSC refused the message: ${answer.statusCode} ${answer.statusText}`);
      return { ok: true, messageId: answer.messageId };
    } catch (error) {
      if (error instanceof Mm7Error)
        return refused(
          `the MMSC answered HTTP ${result.status} without a SubmitRsp: ${error.message}`,
        );
      throw error;
    }
  }
}
