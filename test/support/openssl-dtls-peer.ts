import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import type { DtlsEndpoint } from '../../src/media/dtls/dtls-endpoint.js';
import { freePort } from './free-port.js';
import { until } from './wait.js';

/**
 * OpenSSL's command-line DTLS 1.2 peer (`openssl s_server -dtls1_2` or `s_client -dtls1_2`) on
 * 127.0.0.1, with use_srtp and the RFC 5764 exporter: both print the profile they negotiated
 * and the keying material they exported, which the tests compare with ours.
 */
export interface OpenSslDtlsPeer {
  /** The UDP port it listens on (server) or connects to (client). */
  port: number;
  /** stdout and stderr so far. */
  output(): string;
  /** The exported keying material, once printed (upper-case hex). */
  keyingMaterial(): string | undefined;
  /** The SRTP profile it says it negotiated. */
  srtpProfile(): string | undefined;
  /** A line on its standard input (`Q` ends s_client with close_notify). */
  write(line: string): void;
  pid: number;
  stop(): Promise<void>;
}

export interface OpenSslDtlsOptions {
  certPath: string;
  keyPath: string;
  /** Colon-separated, as -use_srtp takes them. */
  srtpProfiles: string;
  keyingMaterialLength: number;
}

/** s_server, which requires a client certificate (-Verify) and verifies it leniently. */
export async function startOpenSslDtlsServer(
  options: OpenSslDtlsOptions,
): Promise<OpenSslDtlsPeer> {
  const port = await freePort();
  const peer = startPeer(port, [
    's_server',
    '-dtls1_2',
    '-accept',
    `127.0.0.1:${port}`,
    '-Verify',
    '1',
    ...common(options),
  ]);
  await until(() => peer.output().includes('ACCEPT'), 5000);
  return peer;
}

/** s_client to `port` on 127.0.0.1, presenting its certificate. */
export function startOpenSslDtlsClient(port: number, options: OpenSslDtlsOptions): OpenSslDtlsPeer {
  return startPeer(port, [
    's_client',
    '-dtls1_2',
    '-connect',
    `127.0.0.1:${port}`,
    ...common(options),
  ]);
}

function common(options: OpenSslDtlsOptions): string[] {
  return [
    '-cert',
    options.certPath,
    '-key',
    options.keyPath,
    '-use_srtp',
    options.srtpProfiles,
    '-keymatexport',
    'EXTRACTOR-dtls_srtp',
    '-keymatexportlen',
    String(options.keyingMaterialLength),
  ];
}

function startPeer(port: number, args: string[]): OpenSslDtlsPeer {
  // stdin stays open: both tools end their connection at end of input.
  const child: ChildProcess = spawn('openssl', args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    port,
    pid: child.pid!,
    output: () => text,
    keyingMaterial: () => /Keying material: ([0-9A-F]+)/.exec(text)?.[1],
    srtpProfile: () => /SRTP Extension negotiated, profile=(\S+)/.exec(text)?.[1],
    write: (line) => child.stdin!.write(`${line}\n`),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

/**
 * A UDP socket on 127.0.0.1 that joins an endpoint to a peer: what the endpoint sends goes to
 * the peer, and datagrams that arrive go to feed() when their first byte says DTLS (RFC 7983:
 * 20 to 63). The peer's port is given, or learnt from its first datagram.
 */
export class DtlsUdpRelay {
  readonly socket: Socket = createSocket('udp4');
  endpoint: DtlsEndpoint | undefined;
  /** Decides, per datagram the endpoint sends, whether it reaches the peer. */
  passOutgoing: (datagram: Buffer, index: number) => boolean = () => true;
  passIncoming: (datagram: Buffer, index: number) => boolean = () => true;
  private peerPort: number | undefined;
  private sentCount = 0;
  private receivedCount = 0;

  async bind(peerPort?: number): Promise<number> {
    this.peerPort = peerPort;
    this.socket.on('message', (datagram, from) => {
      this.peerPort ??= from.port;
      const first = datagram[0] ?? 0;
      if (first < 20 || first > 63) return;
      if (!this.passIncoming(datagram, this.receivedCount++)) return;
      this.endpoint?.feed(datagram);
    });
    await new Promise<void>((resolve) => this.socket.bind(0, '127.0.0.1', resolve));
    return this.socket.address().port;
  }

  /** For the endpoint's listener. */
  send = (datagram: Buffer): void => {
    if (!this.passOutgoing(datagram, this.sentCount++) || this.peerPort === undefined) return;
    this.socket.send(datagram, this.peerPort, '127.0.0.1');
  };

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}
