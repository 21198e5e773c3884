import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { SmppCarrier } from '../messaging/smpp/carrier-config.js';
import { encodePdu, PduReader, STATUS, type Pdu } from '../messaging/smpp/pdu.js';
import { fail, ok, reason, type CheckResult } from './check-result.js';
import { hostPort } from './port-binding.js';

const SMPP_TIMEOUT_MS = 5000;
const UNBIND_WAIT_MS = 1000;

/** `ESME_RINVPASWD (0x0000000e)`, or the bare code when SMPP 3.4 gives it no name here. */
export function statusName(status: number): string {
  const hex = `0x${status.toString(16).padStart(8, '0')}`;
  const name = Object.entries(STATUS).find(([, value]) => value === status)?.[0];
  return name ? `${name} (${hex})` : hex;
}

/**
 * One bind_transceiver with the carrier's credentials, as the gateway's binds open, then an
 * unbind: the SMSC is reachable and takes the system_id and password of VOXGATE_SMPP_URL.
 */
export async function checkSmppCarrier(carrier: SmppCarrier): Promise<CheckResult> {
  const name = `smpp:${carrier.name}`;
  const where = `${carrier.tls ? 'ssmpp' : 'smpp'}://${hostPort(carrier.host, carrier.port)}`;
  const as = `system_id ${carrier.systemId}`;
  const bind: Pdu = {
    command: 'bind_transceiver',
    status: 0,
    sequence: 1,
    fields: {
      system_id: carrier.systemId,
      password: carrier.password,
      system_type: carrier.systemType,
      interface_version: 0x34,
      addr_ton: 0,
      addr_npi: 0,
      address_range: '',
    },
    tlvs: [],
  };
  try {
    encodePdu(bind);
  } catch (error) {
    // SMPP 3.4 4.1.1 limits each field's length: no SMSC would take this bind.
    return fail(
      name,
      `no bind_transceiver can carry these credentials (${reason(error)}): correct ` +
        `VOXGATE_SMPP_URL`,
    );
  }
  let link: SmppExchange;
  try {
    link = await SmppExchange.open(carrier);
  } catch (error) {
    return fail(
      name,
      `cannot connect to ${where} (${reason(error)}): check the host and port in VOXGATE_SMPP_URL`,
    );
  }
  try {
    const answer = await link.request(bind);
    if (answer.status !== STATUS.ESME_ROK)
      return fail(
        name,
        `${where} refused the bind as ${as}: ${statusName(answer.status)}; check the ` +
          `system_id, password and system_type in VOXGATE_SMPP_URL`,
      );
    const smsc = (answer.fields as { system_id?: string }).system_id;
    const unbound = await link
      .request({ command: 'unbind', status: 0, sequence: 2, fields: {}, tlvs: [] }, UNBIND_WAIT_MS)
      .then(
        () => 'then unbound',
        () => 'then closed (no unbind_resp)',
      );
    return ok(
      name,
      `${where} took a transceiver bind as ${as}${smsc ? ` (SMSC ${smsc})` : ''}, ${unbound}`,
    );
  } catch (error) {
    return fail(name, `${where} did not answer bind_transceiver as ${as}: ${reason(error)}`);
  } finally {
    link.close();
  }
}

/** A connection to an SMSC that sends one PDU at a time and waits for its answer. */
class SmppExchange {
  private readonly reader = new PduReader();
  private waiting: { sequence: number; answer(pdu: Pdu): void; fault(e: Error): void } | null =
    null;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', (error) => this.waiting?.fault(error));
    socket.on('close', () => this.waiting?.fault(new Error('the SMSC closed the connection')));
  }

  static open(carrier: SmppCarrier): Promise<SmppExchange> {
    const { host, port } = carrier;
    const socket = carrier.tls
      ? tlsConnect({ host, port, servername: host, rejectUnauthorized: !carrier.tlsInsecure })
      : netConnect({ host, port });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`no connection in ${SMPP_TIMEOUT_MS / 1000} s`));
      }, SMPP_TIMEOUT_MS);
      socket.once(carrier.tls ? 'secureConnect' : 'connect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        resolve(new SmppExchange(socket));
      });
      socket.once('error', (error) => {
        clearTimeout(timer);
        socket.destroy();
        reject(error);
      });
    });
  }

  request(pdu: Pdu, timeoutMs = SMPP_TIMEOUT_MS): Promise<Pdu> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = null;
        reject(new Error(`no ${pdu.command}_resp in ${timeoutMs / 1000} s`));
      }, timeoutMs);
      const settle = () => {
        clearTimeout(timer);
        this.waiting = null;
      };
      this.waiting = {
        sequence: pdu.sequence,
        answer: (answer) => {
          settle();
          resolve(answer);
        },
        fault: (error) => {
          settle();
          reject(error);
        },
      };
      this.socket.write(encodePdu(pdu));
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private receive(chunk: Buffer): void {
    const { pdus, fatal } = this.reader.push(chunk);
    for (const pdu of pdus) {
      if (pdu.sequence !== this.waiting?.sequence) continue;
      if (pdu.command === 'generic_nack' || pdu.command.endsWith('_resp')) this.waiting.answer(pdu);
    }
    if (fatal) this.waiting?.fault(new Error(`unreadable answer: ${fatal}`));
  }
}
