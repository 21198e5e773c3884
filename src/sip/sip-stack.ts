import type { Scheduler } from '../core/scheduler.js';

import type { SipMetrics } from './transaction/sip-metrics.js';
import type { TimerSettings } from './transaction/timers.js';
import { TransactionLayer } from './transaction/transaction-layer.js';
import type { Address, Flow, TransportProtocol } from './transport/flow.js';
import { TcpTransport } from './transport/tcp-transport.js';
import { TransportLayer, type TransportBinding } from './transport/transport-layer.js';
import type { ConnectionListener } from './transport/connection-listener.js';
import type { TlsCredentials } from './transport/tls-credentials.js';
import { TlsTransport } from './transport/tls-transport.js';
import { UdpTransport } from './transport/udp-transport.js';
import { WsTransport } from './transport/ws-transport.js';
import { UserAgentCore } from './ua/user-agent-core.js';

const FREE_PORT_ATTEMPTS = 10;

/** What every transport offers the stack. */
export interface ListeningTransport {
  readonly local: Address;
  send(data: Buffer, to: Address | { connectionId: string }): void | Promise<void>;
  close(): Promise<void>;
}

export interface SipStackOptions {
  scheduler: Scheduler;
  /** The address written into Via and Contact (VOXGATE_PUBLIC_HOST). */
  publicHost: string;
  timers?: TimerSettings;
  metrics?: SipMetrics;
  /** Told of transport errors and discarded messages (never with message contents). */
  onWarning?: (message: string) => void;
  /** Told of each message that is not SIP at all, dropped unanswered (no warning for it). */
  onNonSip?: (flow: Flow) => void;
}

/**
 * The SIP stack assembled: transports below the transport layer, the transaction layer, and
 * the UA core that handlers and the dialog layer attach to.
 */
export class SipStack {
  readonly transport: TransportLayer;
  readonly transactions: TransactionLayer;
  readonly core: UserAgentCore;
  private readonly listening: ListeningTransport[] = [];
  private readonly closeHooks: (() => void)[] = [];
  private readonly flowCloseHooks: ((flow: Flow) => void)[] = [];

  constructor(private readonly options: SipStackOptions) {
    this.transport = new TransportLayer({
      onRequest: (request, flow) => this.transactions.receiveRequest(request, flow),
      onResponse: (response, flow) => this.transactions.receiveResponse(response, flow),
      onDiscard: (reason, flow) =>
        options.onWarning?.(
          `discarded a message from ${flow.protocol} ${flow.remote.address}: ${reason}`,
        ),
      onNonSip: (flow) => options.onNonSip?.(flow),
      onSendFailed: (what, peer, error) =>
        options.onWarning?.(`could not send ${what} to ${peer}: ${error.message}`),
    });
    this.transactions = new TransactionLayer(this.transport, {
      scheduler: options.scheduler,
      timers: options.timers,
      metrics: options.metrics,
    });
    this.core = new UserAgentCore(this.transactions);
  }

  /** The listener a transport hands its messages to. */
  get listener(): ConnectionListener {
    return {
      onMessage: (data: Buffer, flow: Flow) => this.receive(data, flow),
      onError: (error: Error) => this.options.onWarning?.(`SIP transport: ${error.message}`),
      onClose: (flow: Flow) => {
        if (flow.connectionId && (flow.protocol === 'WS' || flow.protocol === 'WSS')) {
          this.transactions.connectionClosed(flow.connectionId);
        }
        for (const hook of this.flowCloseHooks) hook(flow);
      },
    };
  }

  /** Told when a connection (TCP, TLS, WebSocket) closes. */
  onFlowClosed(hook: (flow: Flow) => void): void {
    this.flowCloseHooks.push(hook);
  }

  /**
   * Listens for UDP and TCP on one port. Port 0 means one free port for both: the port the
   * system gives UDP may be held by a TCP socket, so a few are tried.
   */
  async listenUdpTcp(host: string, port: number): Promise<{ udp: Address; tcp: Address }> {
    for (let attempt = 1; ; attempt++) {
      const udp = await UdpTransport.listen(host, port, this.listener);
      let tcp: TcpTransport;
      try {
        tcp = await TcpTransport.listen(host, udp.local.port, this.listener);
      } catch (error) {
        await udp.close();
        const taken = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
        if (port === 0 && taken && attempt < FREE_PORT_ATTEMPTS) continue;
        throw error;
      }
      this.attach('UDP', udp);
      this.attach('TCP', tcp);
      return { udp: udp.local, tcp: tcp.local };
    }
  }

  /**
   * SIP over WebSocket (RFC 7118); WSS when credentials are given. `origins` lists the page
   * origins allowed to connect (WsTransportOptions); every origin when not given.
   */
  async listenWebSocket(
    host: string,
    port: number,
    tls?: TlsCredentials,
    origins?: readonly string[],
  ): Promise<Address> {
    const ws = await WsTransport.listen(host, port, this.listener, {
      ...(tls ? { tls } : {}),
      ...(origins ? { origins } : {}),
    });
    this.attach(tls ? 'WSS' : 'WS', ws);
    return ws.local;
  }

  async listenTls(host: string, port: number, tls: TlsCredentials): Promise<Address> {
    const transport = await TlsTransport.listen(host, port, this.listener, tls);
    this.attach('TLS', transport);
    return transport.local;
  }

  /** Puts a listening transport under the stack for a protocol. */
  attach(protocol: TransportProtocol, transport: ListeningTransport): void {
    const binding: TransportBinding = {
      protocol,
      sentBy: { address: this.options.publicHost, port: transport.local.port },
      send: (data, to) => transport.send(data, to),
    };
    this.transport.add(binding);
    this.listening.push(transport);
  }

  /** Runs before the transports close (the registrar stops its timers, say). */
  onClose(hook: () => void): void {
    this.closeHooks.push(hook);
  }

  async close(): Promise<void> {
    for (const hook of this.closeHooks) hook();
    this.transactions.close();
    await Promise.all(this.listening.map((t) => t.close()));
  }

  private receive(data: Buffer, flow: Flow): void {
    try {
      this.transport.receive(data, flow);
    } catch (error) {
      // A fault while handling one message must not take down the others.
      this.options.onWarning?.(
        `SIP message from ${flow.remote.address} failed: ${(error as Error).message}`,
      );
    }
  }
}
