import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { systemScheduler, type Scheduler, type TimerHandle } from '../../core/scheduler.js';
import type { SmppCarrier } from './carrier-config.js';
import {
  encodePdu,
  PduReader,
  STATUS,
  type Pdu,
  type ShortMessageFields,
  type Tlv,
} from './pdu.js';

export type BindState = 'idle' | 'connecting' | 'binding' | 'bound' | 'closed';

export interface SmppLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface DeliverSm {
  command: 'deliver_sm';
  status: number;
  sequence: number;
  fields: ShortMessageFields;
  tlvs: Tlv[];
}

export interface SmppBindOptions {
  scheduler?: Scheduler;
  log: SmppLog;
  /** A deliver_sm from the carrier; it is acknowledged once this resolves (0x64 if it throws). */
  onDeliver(pdu: DeliverSm): Promise<void>;
  onStateChange?(state: BindState): void;
  /** Which bind of its carrier this is, for logs and metrics. */
  id?: number;
}

/** A submit the carrier refused, or one given up: `expired` past its deadline. */
export class SmppSubmitError extends Error {
  constructor(
    message: string,
    readonly commandStatus: number | null,
    readonly permanent: boolean,
    readonly expired: boolean,
  ) {
    super(message);
    this.name = 'SmppSubmitError';
  }
}

interface Submit {
  fields: ShortMessageFields;
  tlvs: Tlv[];
  deadline: number;
  accepted?: (messageId: string) => void;
  attempts: number;
  resolve(messageId: string): void;
  reject(error: SmppSubmitError): void;
}

interface Waiting {
  submit?: Submit;
  answer?(pdu: Pdu): void;
  timer: TimerHandle;
}

type TimerName = 'reconnect' | 'pump' | 'enquire' | 'sweep';

/** Statuses that mean "later", not "no": the submit waits and the bind slows down. */
const SLOW_DOWN = new Set<number>([STATUS.ESME_RTHROTTLED, STATUS.ESME_RMSGQFUL]);
const MAX_ATTEMPTS = 4;
const RECONNECT_MIN_MS = 1000;
const RECONNECT_MAX_MS = 30_000;
const THROTTLE_PAUSE_MS = 1000;
/** Rate assumed for a bind without a cap when the carrier first throttles it. */
const UNCAPPED_THROTTLE_RATE = 200;

/**
 * One SMPP 3.4 transceiver bind to a carrier: at most `window` unanswered submit_sm, at most
 * `mps` a second, answers it must get within the response timeout, enquire_link both ways, and
 * a connection that comes back by itself. A submit resolves with the carrier's message id, or
 * rejects when the carrier refuses it or its deadline passes; throttling, a lost connection or
 * a missing answer only delay it. No socket error leaves this class.
 */
export class SmppBind {
  private current: BindState = 'idle';
  private socket: Socket | null = null;
  private reader = new PduReader();
  private readonly queue: Submit[] = [];
  private readonly waiting = new Map<number, Waiting>();
  private sequence = 0;
  private inFlightSubmits = 0;
  private throttles = 0;
  private reconnectDelay = RECONNECT_MIN_MS;
  private timers: Partial<Record<TimerName, TimerHandle>> = {};
  /** When a submit_sm last went out, or work began to wait on an idle bind. */
  private lastProgress = 0;
  private rate: number;
  private tokens = 1;
  private lastRefill = 0;
  private pausedUntil = 0;
  private lastThrottle = 0;
  private readonly scheduler: Scheduler;

  constructor(
    private readonly carrier: SmppCarrier,
    private readonly options: SmppBindOptions,
  ) {
    this.scheduler = options.scheduler ?? systemScheduler;
    this.rate = carrier.mps > 0 ? carrier.mps : Infinity;
  }

  get state(): BindState {
    return this.current;
  }

  get inFlight(): number {
    return this.inFlightSubmits;
  }

  get queued(): number {
    return this.queue.length;
  }

  get throttleEvents(): number {
    return this.throttles;
  }

  /**
   * How long submits have waited while nothing went out (ms): 0 when none waits. A bind that
   * is up and has work but sends nothing for long is stuck, whatever its state says.
   */
  idleWithWork(now = this.scheduler.now()): number {
    if (this.queue.length === 0) return 0;
    return Math.max(0, now - this.lastProgress);
  }

  start(): void {
    if (this.current !== 'idle') return;
    this.connect();
  }

  /**
   * Sends a submit_sm. `accepted` hears the message id the moment the answer is read, before
   * any PDU that came after it (a receipt may follow in the same packet).
   */
  submit(
    fields: ShortMessageFields,
    tlvs: Tlv[],
    options: { deadline: number; accepted?: (messageId: string) => void },
  ): Promise<string> {
    if (this.current === 'closed')
      return Promise.reject(new SmppSubmitError('the SMPP bind is closed', null, false, false));
    return new Promise((resolve, reject) => {
      const { deadline, accepted } = options;
      if (this.queue.length === 0 && this.inFlightSubmits === 0)
        this.lastProgress = this.scheduler.now();
      this.queue.push({ fields, tlvs, deadline, accepted, attempts: 0, resolve, reject });
      this.pump();
    });
  }

  async close(): Promise<void> {
    if (this.current === 'closed') return;
    const socket = this.socket;
    const wasBound = this.current === 'bound';
    this.setState('closed');
    for (const name of Object.keys(this.timers) as TimerName[]) this.cancelTimer(name);
    for (const item of this.queue.splice(0))
      item.reject(
        new SmppSubmitError('the SMPP bind was closed before it sent', null, false, false),
      );
    if (socket && wasBound) {
      await new Promise<void>((resolve) => {
        const timer = this.scheduler.after(1000, resolve);
        this.request({ command: 'unbind', status: 0, sequence: 0, fields: {}, tlvs: [] }, () => {
          timer.cancel();
          resolve();
        });
      });
    }
    this.dropWaiting('the SMPP bind was closed');
    socket?.destroy();
    this.socket = null;
  }

  private connect(): void {
    this.setState('connecting');
    const { host, port } = this.carrier;
    const socket = this.carrier.tls
      ? tlsConnect({ host, port, servername: host, rejectUnauthorized: !this.carrier.tlsInsecure })
      : netConnect({ host, port });
    socket.setNoDelay(true);
    this.socket = socket;
    this.reader = new PduReader();
    socket.once(this.carrier.tls ? 'secureConnect' : 'connect', () => this.bind());
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', (error) =>
      this.options.log.warn(this.logFields({ err: error.message }), 'SMPP connection error'),
    );
    socket.on('close', () => this.lost(socket));
  }

  private bind(): void {
    this.setState('binding');
    const pdu: Pdu = {
      command: 'bind_transceiver',
      status: 0,
      sequence: 0,
      fields: {
        system_id: this.carrier.systemId,
        password: this.carrier.password,
        system_type: this.carrier.systemType,
        interface_version: 0x34,
        addr_ton: 0,
        addr_npi: 0,
        address_range: '',
      },
      tlvs: [],
    };
    this.request(pdu, (answer) => {
      if (answer.status === STATUS.ESME_ROK) {
        this.reconnectDelay = RECONNECT_MIN_MS;
        this.setState('bound');
        this.options.log.info(this.logFields({}), 'SMPP bind up');
        this.scheduleEnquireLink();
        this.pump();
        return;
      }
      this.options.log.warn(
        this.logFields({ status: hex(answer.status) }),
        answer.status === STATUS.ESME_RALYBND
          ? 'SMPP bind refused: already bound; unbinding and binding again'
          : 'SMPP bind refused',
      );
      if (answer.status === STATUS.ESME_RALYBND)
        this.send({
          command: 'unbind',
          status: 0,
          sequence: this.nextSequence(),
          fields: {},
          tlvs: [],
        });
      this.socket?.destroy();
    });
  }

  private lost(socket: Socket): void {
    if (socket !== this.socket) return;
    this.socket = null;
    // A cancelled timer must also be forgotten: pump() waits while one is set, and would wait
    // for ever for a timer that never fires.
    this.cancelTimer('enquire');
    this.cancelTimer('pump');
    // Unanswered submits were not acknowledged: they go out again, first, after the rebind.
    const unanswered: Submit[] = [];
    for (const [sequence, waiting] of this.waiting) {
      waiting.timer.cancel();
      this.waiting.delete(sequence);
      if (waiting.submit) unanswered.push(waiting.submit);
    }
    this.inFlightSubmits = 0;
    this.queue.unshift(...unanswered);
    if (this.current === 'closed') return;
    this.options.log.warn(
      this.logFields({ requeued: unanswered.length, retryInMs: this.reconnectDelay }),
      'SMPP connection lost; reconnecting',
    );
    this.setState('connecting');
    const delay = this.reconnectDelay * (0.75 + Math.random() * 0.5);
    this.reconnectDelay = Math.min(this.reconnectDelay * 2, RECONNECT_MAX_MS);
    this.timers.reconnect = this.scheduler.after(delay, () => {
      if (this.current !== 'closed') this.connect();
    });
    this.sweepExpired();
  }

  private receive(chunk: Buffer): void {
    const { pdus, errors, fatal } = this.reader.push(chunk);
    for (const { error, raw } of errors) {
      this.options.log.warn(
        this.logFields({ err: error.message, raw: raw.subarray(0, 256).toString('hex') }),
        'malformed PDU from the carrier: answered generic_nack',
      );
      this.send({
        command: 'generic_nack',
        status: error.status,
        sequence: error.sequence ?? 0,
        fields: {},
        tlvs: [],
      });
    }
    for (const pdu of pdus) this.handle(pdu);
    if (fatal) {
      this.options.log.warn(this.logFields({ err: fatal }), 'unreadable stream from the carrier');
      this.send({
        command: 'generic_nack',
        status: STATUS.ESME_RINVCMDLEN,
        sequence: 0,
        fields: {},
        tlvs: [],
      });
      this.socket?.destroy();
    }
  }

  private handle(pdu: Pdu): void {
    if (pdu.command.endsWith('_resp') || pdu.command === 'generic_nack') {
      const waiting = this.waiting.get(pdu.sequence);
      if (!waiting) return;
      this.waiting.delete(pdu.sequence);
      waiting.timer.cancel();
      if (waiting.submit) this.answered(waiting.submit, pdu);
      else waiting.answer?.(pdu);
      return;
    }
    const reply = (command: Pdu['command'], status = 0, fields: Record<string, string> = {}) =>
      this.send({ command, status, sequence: pdu.sequence, fields, tlvs: [] } as Pdu);
    switch (pdu.command) {
      case 'enquire_link':
        return reply('enquire_link_resp');
      case 'unbind':
        reply('unbind_resp');
        this.socket?.end();
        return;
      case 'deliver_sm':
        this.options.onDeliver(pdu as DeliverSm).then(
          () => reply('deliver_sm_resp', 0, { message_id: '' }),
          (error: Error) => {
            this.options.log.warn(this.logFields({ err: error.message }), 'deliver_sm not taken');
            reply('deliver_sm_resp', STATUS.ESME_RX_T_APPN, { message_id: '' });
          },
        );
        return;
      default:
        reply('generic_nack', STATUS.ESME_RINVCMDID);
    }
  }

  private answered(submit: Submit, pdu: Pdu): void {
    this.inFlightSubmits--;
    const status = pdu.status;
    if (status === STATUS.ESME_ROK && pdu.command === 'submit_sm_resp') {
      const messageId = String((pdu.fields as { message_id?: string }).message_id ?? '');
      submit.accepted?.(messageId);
      submit.resolve(messageId);
      this.recover();
    } else if (SLOW_DOWN.has(status)) {
      this.slowDown(status);
      this.queue.unshift(submit);
    } else if (status === STATUS.ESME_RSYSERR && ++submit.attempts < MAX_ATTEMPTS) {
      this.queue.unshift(submit);
    } else {
      submit.reject(
        new SmppSubmitError(
          `the carrier refused the message (${hex(status)})`,
          status,
          true,
          false,
        ),
      );
    }
    this.pump();
  }

  private slowDown(status: number): void {
    this.throttles++;
    const now = this.scheduler.now();
    this.pausedUntil = now + THROTTLE_PAUSE_MS;
    this.lastThrottle = now;
    const from = Number.isFinite(this.rate) ? this.rate : UNCAPPED_THROTTLE_RATE;
    this.rate = Math.max(1, from / 2);
    this.options.log.info(
      this.logFields({ status: hex(status), rate: this.rate }),
      'the carrier asks to slow down: pausing and halving the send rate',
    );
  }

  /** Back towards the configured rate, a quarter faster for each quiet second. */
  private recover(): void {
    const target = this.carrier.mps > 0 ? this.carrier.mps : Infinity;
    if (this.rate >= target) return;
    const now = this.scheduler.now();
    if (now - this.lastThrottle < 1000) return;
    this.lastThrottle = now;
    this.rate = this.rate * 1.25 >= target ? target : this.rate * 1.25;
  }

  private pump(): void {
    // Also while unbound: a message must expire on time even when the carrier is down.
    this.sweepExpired();
    if (this.current !== 'bound' || this.timers.pump) return;
    const now = this.scheduler.now();
    if (now < this.pausedUntil) return this.pumpLater(this.pausedUntil - now);
    while (this.queue.length > 0 && this.inFlightSubmits < this.carrier.window) {
      if (!this.takeToken(now))
        return this.pumpLater(Math.ceil(((1 - this.tokens) / this.rate) * 1000));
      const submit = this.queue.shift()!;
      this.inFlightSubmits++;
      this.lastProgress = now;
      this.request(
        { command: 'submit_sm', status: 0, sequence: 0, fields: submit.fields, tlvs: submit.tlvs },
        undefined,
        submit,
      );
    }
  }

  private pumpLater(ms: number): void {
    this.timers.pump = this.scheduler.after(Math.max(1, ms), () => {
      this.timers.pump = undefined;
      this.pump();
    });
  }

  private takeToken(now: number): boolean {
    if (!Number.isFinite(this.rate)) return true;
    const burst = Math.max(1, this.rate / 20);
    this.tokens = Math.min(burst, this.tokens + ((now - this.lastRefill) / 1000) * this.rate);
    this.lastRefill = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Rejects waiting submits past their deadline; runs each second while any waits. */
  private sweepExpired(): void {
    const now = this.scheduler.now();
    for (let k = this.queue.length - 1; k >= 0; k--) {
      const submit = this.queue[k]!;
      if (submit.deadline > now) continue;
      this.queue.splice(k, 1);
      submit.reject(
        new SmppSubmitError('the message expired before it was sent', null, false, true),
      );
    }
    if (this.queue.length > 0 && !this.timers.sweep && this.current !== 'closed')
      this.timers.sweep = this.scheduler.after(1000, () => {
        this.timers.sweep = undefined;
        this.sweepExpired();
        this.pump();
      });
  }

  private request(pdu: Pdu, answer?: (pdu: Pdu) => void, submit?: Submit): void {
    const sequence = this.nextSequence();
    const timer = this.scheduler.after(this.carrier.responseTimeoutMs, () =>
      this.timedOut(sequence),
    );
    this.waiting.set(sequence, { submit, answer, timer });
    this.send({ ...pdu, sequence } as Pdu);
  }

  private timedOut(sequence: number): void {
    const waiting = this.waiting.get(sequence);
    if (!waiting) return;
    this.waiting.delete(sequence);
    if (!waiting.submit) {
      this.options.log.warn(this.logFields({}), 'the carrier did not answer in time: reconnecting');
      this.socket?.destroy();
      return;
    }
    this.inFlightSubmits--;
    const submit = waiting.submit;
    if (++submit.attempts >= MAX_ATTEMPTS)
      submit.reject(
        new SmppSubmitError('the carrier never answered the submit', null, false, false),
      );
    else this.queue.unshift(submit);
    this.pump();
  }

  private cancelTimer(name: TimerName): void {
    this.timers[name]?.cancel();
    this.timers[name] = undefined;
  }

  private scheduleEnquireLink(): void {
    this.timers.enquire?.cancel();
    this.timers.enquire = this.scheduler.after(this.carrier.enquireLinkMs, () => {
      if (this.current !== 'bound') return;
      this.request({ command: 'enquire_link', status: 0, sequence: 0, fields: {}, tlvs: [] }, () =>
        this.scheduleEnquireLink(),
      );
    });
  }

  private send(pdu: Pdu): void {
    const socket = this.socket;
    if (!socket || socket.destroyed) return;
    // The PDUs of one turn of the event loop (a window of submits, the answers to a burst of
    // receipts) leave in one system call.
    if (socket.writableCorked === 0) {
      socket.cork();
      setImmediate(() => socket.uncork());
    }
    try {
      socket.write(encodePdu(pdu));
    } catch (error) {
      this.options.log.warn(this.logFields({ err: (error as Error).message }), 'PDU not sent');
    }
  }

  private dropWaiting(reason: string): void {
    for (const [sequence, waiting] of this.waiting) {
      waiting.timer.cancel();
      this.waiting.delete(sequence);
      waiting.submit?.reject(new SmppSubmitError(reason, null, false, false));
    }
    this.inFlightSubmits = 0;
  }

  private nextSequence(): number {
    this.sequence = this.sequence >= 0x7fffffff ? 1 : this.sequence + 1;
    return this.sequence;
  }

  private setState(state: BindState): void {
    if (this.current === state) return;
    this.current = state;
    this.options.onStateChange?.(state);
  }

  private logFields(fields: Record<string, unknown>): Record<string, unknown> {
    return { carrier: this.carrier.name, bind: this.options.id ?? 0, ...fields };
  }
}

function hex(status: number): string {
  return `0x${status.toString(16).padStart(8, '0')}`;
}
