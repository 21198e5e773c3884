import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Registry } from 'prom-client';
import type { Config } from '../config/config.js';
import { DIGEST_REALM } from '../core/digest.js';
import type { Scheduler } from '../core/scheduler.js';
import { DigestAuthenticator } from '../sip/auth/digest-authenticator.js';
import { DialogLayer } from '../sip/dialog/dialog-layer.js';
import { SipStack } from '../sip/sip-stack.js';
import { InviteClient } from '../sip/ua/invite-client.js';
import { InviteServer } from '../sip/ua/invite-server.js';
import type { Address } from '../sip/transport/flow.js';
import { Registrar } from '../sip/ua/registrar.js';
import { RequestAuthenticator } from '../sip/ua/request-authenticator.js';
import type { State } from '../state/state.js';
import { StateRegistrarDirectory } from './registrar-directory.js';
import { NonSipTraffic } from './non-sip-traffic.js';
import { prometheusSipMetrics } from './sip-metrics.js';
import { redactSipSecrets } from './sip-trace.js';
import { responseTo } from '../sip/transaction/response-to.js';

export interface SipLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface SipServiceOptions {
  config: Config;
  state: State;
  scheduler: Scheduler;
  /** The main account's token: nodes of one gateway derive the same nonce secret from it. */
  mainToken: string;
  log: SipLogger;
  registry: Registry;
}

export interface SipAddresses {
  udp: Address;
  tcp: Address;
  /** WebSocket, or WebSocket over TLS when a certificate is configured. */
  ws: Address;
  tls: Address | null;
}

/** The SIP side of the gateway: the stack, its listeners, and the registrar on the state. */
export class SipService {
  readonly stack: SipStack;
  readonly registrar: Registrar;
  readonly dialogs: DialogLayer;
  /** Places calls (the call layer's outbound legs). */
  readonly invites: InviteClient;
  /** Receives calls: until the call layer sets onInvite, an INVITE is answered 480. */
  readonly incoming: InviteServer;
  /** Checks who sent an INVITE: an endpoint's digest, or a bearer token over WebSocket. */
  readonly callers: RequestAuthenticator;
  /** This node's id (VOXGATE_NODE_ID): its registrations and, on Redis, its calls name it. */
  readonly node: string;
  private addressesValue: SipAddresses | null = null;

  constructor(private readonly options: SipServiceOptions) {
    const { config, state, scheduler, log, registry } = options;
    this.node = config.nodeId;
    const { metrics, watch } = prometheusSipMetrics(registry);
    const nonSip = new NonSipTraffic(registry, scheduler, log);
    this.stack = new SipStack({
      scheduler,
      publicHost: config.publicHost,
      metrics,
      onWarning: (message) => log.warn({ sip: true }, message),
      onNonSip: (flow) => nonSip.received(flow),
    });
    this.stack.onClose(() => nonSip.close());
    watch(this.stack.transactions);
    const authenticator = new DigestAuthenticator({
      realm: DIGEST_REALM,
      // Every node of one gateway shares the main account, so they accept each other's nonces.
      secret: createHmac('sha256', options.mainToken).update('voxgate digest nonces').digest(),
      clock: scheduler,
      nonceLifetimeMs: config.sipNonceLifetime * 1000,
      // Every algorithm some transport offers; each client is held to what it was offered.
      algorithms: [...new Set([...config.sipWsDigestAlgorithms, ...config.sipDigestAlgorithms])],
    });
    const offer = {
      sip: config.sipDigestAlgorithms,
      websocket: config.sipWsDigestAlgorithms,
      md5OnlyAgents: config.sipMd5OnlyAgents,
    };
    const directory = new StateRegistrarDirectory(state, () => scheduler.now());
    this.callers = new RequestAuthenticator({
      clock: scheduler,
      directory,
      authenticator,
      offer,
      onRefused: (reason, request) =>
        log.info({ sip: true, method: request.method, reason }, 'INVITE refused'),
    });
    this.registrar = new Registrar(this.stack.core, {
      directory,
      authenticator,
      scheduler,
      node: this.node,
      minExpires: config.sipMinExpires,
      maxExpires: config.sipMaxExpires,
      offer,
      onRefused: (reason, request) =>
        log.info(
          { sip: true, method: request.method, to: request.to().uri.raw, reason },
          'REGISTER refused',
        ),
      onExpiryFailed: (aor, error) =>
        log.warn(
          { sip: true, user: aor.user },
          `expired bindings not removed yet (tried again in 30 s): ${error.message}`,
        ),
    });
    this.stack.onClose(() => this.registrar.close());
    const warn = (message: string) => log.warn({ sip: true }, message);
    this.dialogs = new DialogLayer(this.stack, { onWarning: warn });
    this.invites = new InviteClient(this.stack, this.dialogs);
    this.incoming = new InviteServer(this.stack, this.dialogs, warn);
    // A WebSocket client's contact (an .invalid host, RFC 7118 5.2) is reachable only over its
    // connection: when that closes the binding goes. A TCP or TLS contact can be dialled anew.
    this.stack.onFlowClosed((flow) => {
      if (!flow.connectionId || (flow.protocol !== 'WS' && flow.protocol !== 'WSS')) return;
      this.registrar
        .flowClosed(flow.connectionId)
        .catch((error: Error) =>
          log.warn({ sip: true }, `unbinding a closed connection failed: ${error.message}`),
        );
    });
    this.setTrace(config.sipTrace);
  }

  /**
   * Draining: OPTIONS is answered 503 with Retry-After, so a proxy probing this node stops
   * sending it new calls (the call engine refuses new INVITEs the same way).
   */
  drain(retryAfterSeconds: number): void {
    this.stack.core.handle('OPTIONS', (request, transaction) =>
      transaction.respond(
        responseTo(request, 503, {
          reason: 'Draining',
          headers: [['Retry-After', String(retryAfterSeconds)]],
        }),
      ),
    );
  }

  /** Where the listeners are, once listening. */
  get addresses(): SipAddresses {
    if (!this.addressesValue) throw new Error('the SIP listeners are not started');
    return this.addressesValue;
  }

  get tracing(): boolean {
    return this.stack.transport.trace !== null;
  }

  /** Switches SIP message tracing on or off; credentials are redacted from traced messages. */
  setTrace(on: boolean): void {
    this.stack.transport.trace = on
      ? (direction, data, peer) =>
          this.options.log.info(
            { sip: true, direction, peer, message: redactSipSecrets(data.toString('latin1')) },
            direction === 'in' ? 'SIP received' : 'SIP sent',
          )
      : null;
  }

  async listen(): Promise<SipAddresses> {
    const { config } = this.options;
    const { udp, tcp } = await this.stack.listenUdpTcp(config.sipHost, config.sipPort);
    const tls = config.sipTls
      ? { cert: await readFile(config.sipTls.certFile), key: await readFile(config.sipTls.keyFile) }
      : undefined;
    const ws = await this.stack.listenWebSocket(
      config.sipHost,
      config.sipWsPort,
      tls,
      config.sipWsOrigins ?? undefined,
    );
    const tlsAddress = tls
      ? await this.stack.listenTls(config.sipHost, config.sipTls!.port, tls)
      : null;
    this.addressesValue = { udp, tcp, ws, tls: tlsAddress };
    return this.addressesValue;
  }

  close(): Promise<void> {
    return this.stack.close();
  }
}
