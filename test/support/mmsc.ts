import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  encodeDeliverReq,
  encodeDeliveryReportReq,
  encodeSubmitRsp,
  parseSubmitReq,
  type Mm7Part,
  type SubmitReq,
} from '../../src/messaging/mms/mm7-codec.js';
import { postTo } from './http-post.js';

export const MM7_USER = 'voxgate-vasp';
export const MM7_PASSWORD = 'mm7-secret-for-tests';

/**
 * An MMSC on 127.0.0.1 and a random port, on the MM7 side: it checks the VASP's credentials,
 * parses each SubmitReq as an MMSC does (SOAP envelope and MIME parts), answers SubmitRsp with
 * a message id, and sends delivery reports and inbound MMS (DeliverReq) to the gateway.
 */
export class Mmsc {
  readonly submits: (SubmitReq & { contentType: string; authorization?: string })[] = [];
  private nextId = 1;
  private refuseWith: { code: number; text: string } | null = null;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<Mmsc> {
    const server = createServer();
    const mmsc = new Mmsc(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const expected = `Basic ${Buffer.from(`${MM7_USER}:${MM7_PASSWORD}`).toString('base64')}`;
        if (req.headers.authorization !== expected) {
          res.writeHead(401).end();
          return;
        }
        const contentType = String(req.headers['content-type'] ?? '');
        const submit = parseSubmitReq(contentType, Buffer.concat(chunks));
        mmsc.submits.push({ ...submit, contentType, authorization: req.headers.authorization });
        const refusal = mmsc.refuseWith;
        mmsc.refuseWith = null;
        const answer = refusal
          ? {
              transactionId: submit.transactionId,
              statusCode: refusal.code,
              statusText: refusal.text,
            }
          : {
              transactionId: submit.transactionId,
              statusCode: 1000,
              statusText: 'Success',
              messageId: `MMSC-${String(mmsc.nextId++).padStart(6, '0')}`,
            };
        res
          .writeHead(200, { 'Content-Type': 'text/xml; charset=utf-8' })
          .end(encodeSubmitRsp(answer));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return mmsc;
  }

  /** VOXGATE_MMS_MM7_URL for this MMSC. */
  get url(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://${MM7_USER}:${MM7_PASSWORD}@127.0.0.1:${port}/mm7?vasp_id=voxgate&vas_id=mms`;
  }

  /** The next SubmitReq is answered with this status instead of success. */
  refuseNext(code: number, text: string): void {
    this.refuseWith = { code, text };
  }

  /** Sends a DeliveryReportReq to the gateway's MM7 endpoint; resolves with its answer. */
  deliveryReport(gatewayUrl: string, messageId: string, recipient: string, mmStatus: string) {
    return post(
      gatewayUrl,
      'text/xml; charset=utf-8',
      Buffer.from(
        encodeDeliveryReportReq({
          transactionId: `dr-${messageId}`,
          messageId,
          recipient,
          mmStatus,
          date: new Date().toISOString(),
        }),
      ),
    );
  }

  /** Sends an inbound MMS (DeliverReq) to the gateway's MM7 endpoint. */
  deliver(gatewayUrl: string, from: string, to: string, parts: Mm7Part[]) {
    const { contentType, body } = encodeDeliverReq({
      transactionId: `in-${Date.now()}`,
      sender: from,
      recipients: [to],
      subject: 'photo',
      parts,
    });
    return post(gatewayUrl, contentType, body);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

function post(
  url: string,
  contentType: string,
  body: Buffer,
): Promise<{ status: number; body: string }> {
  const auth = Buffer.from(`${MM7_USER}:${MM7_PASSWORD}`).toString('base64');
  return postTo(url, body, {
    'Content-Type': contentType,
    SOAPAction: '""',
    Authorization: `Basic ${auth}`,
  });
}
