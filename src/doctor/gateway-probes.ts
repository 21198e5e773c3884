import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { connect as netConnect, isIPv6, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { WebSocket } from 'ws';
import type { SipTransport } from '../config/listeners.js';
import { hostPort } from './port-binding.js';

export const PROBE_TIMEOUT_MS = 2000;

/**
 * Asks GET /health whether a voxgate gateway listens there: it answers JSON with an `api_id`
 * and a `status` of `ok`, `starting`, `draining` or `store_unavailable`. Resolves with that
 * status, or null.
 */
export async function voxgateHealth(host: string, port: number): Promise<string | null> {
  try {
    const response = await fetch(`http://${hostPort(host, port)}/health`, {
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    const body = (await response.json()) as { api_id?: unknown; status?: unknown };
    const known = ['ok', 'starting', 'draining', 'store_unavailable'];
    return typeof body.api_id === 'string' && typeof body.status === 'string'
      ? known.includes(body.status)
        ? body.status
        : null
      : null;
  } catch {
    return null;
  }
}

/** Whether a SIP server answers an OPTIONS on this transport within the probe timeout. */
export function answersSip(transport: SipTransport, host: string, port: number): Promise<boolean> {
  const request = optionsRequest(transport, host, port);
  const attempt =
    transport === 'udp'
      ? overUdp(request, host, port)
      : transport === 'ws' || transport === 'wss'
        ? overWebSocket(request, transport, host, port)
        : overStream(request, transport, host, port);
  return attempt.catch(() => false);
}

function optionsRequest(transport: SipTransport, host: string, port: number): string {
  const token = randomBytes(6).toString('hex');
  const target = hostPort(host, port);
  return [
    `OPTIONS sip:${target};transport=${transport} SIP/2.0`,
    // RFC 7118 5.2: a WebSocket client's own address is unknown; `.invalid` stands for it.
    `Via: SIP/2.0/${transport.toUpperCase()} doctor.invalid;branch=z9hG4bK${token};rport`,
    'Max-Forwards: 70',
    `From: <sip:doctor@doctor.invalid>;tag=${token}`,
    `To: <sip:${target}>`,
    `Call-ID: ${token}@doctor.invalid`,
    'CSeq: 1 OPTIONS',
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
}

const isSipResponse = (data: Buffer | string): boolean => String(data).startsWith('SIP/2.0 ');

function overUdp(request: string, host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createSocket(isIPv6(host) ? 'udp6' : 'udp4');
    const done = (answered: boolean) => {
      clearTimeout(timer);
      socket.close();
      resolve(answered);
    };
    const timer = setTimeout(() => done(false), PROBE_TIMEOUT_MS);
    socket.on('error', () => done(false));
    socket.on('message', (data) => done(isSipResponse(data)));
    socket.send(request, port, host);
  });
}

function overStream(
  request: string,
  transport: 'tcp' | 'tls',
  host: string,
  port: number,
): Promise<boolean> {
  return new Promise((resolve) => {
    // Only whether it speaks SIP is asked: whose certificate it is, is not.
    const socket: Socket =
      transport === 'tls'
        ? tlsConnect({ host, port, rejectUnauthorized: false })
        : netConnect({ host, port });
    let received = '';
    const done = (answered: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answered);
    };
    const timer = setTimeout(() => done(false), PROBE_TIMEOUT_MS);
    socket.once(transport === 'tls' ? 'secureConnect' : 'connect', () => socket.write(request));
    socket.on('data', (chunk: Buffer) => {
      received += String(chunk);
      if (received.length >= 8) done(isSipResponse(received));
    });
    socket.on('error', () => done(false));
    socket.on('close', () => done(false));
  });
}

function overWebSocket(
  request: string,
  transport: 'ws' | 'wss',
  host: string,
  port: number,
): Promise<boolean> {
  return new Promise((resolve) => {
    // RFC 7118 4: the subprotocol `sip`.
    const socket = new WebSocket(`${transport}://${hostPort(host, port)}`, 'sip', {
      rejectUnauthorized: false,
      handshakeTimeout: PROBE_TIMEOUT_MS,
    });
    const done = (answered: boolean) => {
      clearTimeout(timer);
      socket.terminate();
      resolve(answered);
    };
    const timer = setTimeout(() => done(false), PROBE_TIMEOUT_MS);
    socket.on('open', () => socket.send(request));
    socket.on('message', (data) => done(isSipResponse(String(data))));
    socket.on('error', () => done(false));
    socket.on('close', () => done(false));
  });
}
