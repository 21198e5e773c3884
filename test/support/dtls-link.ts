import { DtlsContext } from '../../src/media/dtls/dtls-context.js';
import {
  DtlsEndpoint,
  type DtlsEndpointOptions,
  type DtlsFailure,
} from '../../src/media/dtls/dtls-endpoint.js';
import type { DtlsCertificate } from '../../src/media/dtls/dtls-certificate.js';
import type { DtlsRole, SrtpKeys } from '../../src/media/dtls/srtp-keys.js';

/** What one endpoint reported, in order, and every datagram it sent. */
export interface DtlsRecord {
  endpoint: DtlsEndpoint;
  sent: Buffer[];
  connected: SrtpKeys[];
  failed: DtlsFailure[];
  closed: string[];
  errors: Error[];
}

export interface DtlsSide {
  certificate: DtlsCertificate;
  context?: DtlsContext;
  /** The fingerprints this side expects of the other; the other's real one by default. */
  remoteFingerprints?: string[];
  options?: Partial<DtlsEndpointOptions>;
}

/**
 * Passes a datagram from one side to the other, or not: returns the datagrams to deliver in
 * its place (none drops it).
 */
export type DtlsWire = (datagram: Buffer, from: DtlsRole) => Buffer[];

/**
 * A DTLS client and server joined in memory, each datagram delivered on the next turn of the
 * event loop (as from a socket) through `wire`.
 */
export function linkDtls(
  client: DtlsSide,
  server: DtlsSide,
  wire: DtlsWire = (d) => [d],
): { client: DtlsRecord; server: DtlsRecord } {
  const records: Partial<Record<DtlsRole, DtlsRecord>> = {};
  const make = (role: DtlsRole, self: DtlsSide, peer: DtlsSide): DtlsRecord => {
    const other: DtlsRole = role === 'client' ? 'server' : 'client';
    const events: Omit<DtlsRecord, 'endpoint'> = {
      sent: [],
      connected: [],
      failed: [],
      closed: [],
      errors: [],
    };
    const endpoint = new DtlsEndpoint({
      context: self.context ?? new DtlsContext(self.certificate),
      role,
      remoteFingerprints: self.remoteFingerprints ?? [peer.certificate.sdpFingerprint],
      listener: {
        send: (datagram) => {
          events.sent.push(datagram);
          for (const d of wire(datagram, role))
            setImmediate(() => records[other]!.endpoint.feed(d));
        },
        onConnected: (keys) => events.connected.push(keys),
        onFailed: (failure) => events.failed.push(failure),
        onClosed: (reason) => events.closed.push(reason),
        onError: (error) => events.errors.push(error),
      },
      ...self.options,
    });
    return { endpoint, ...events };
  };
  records.client = make('client', client, server);
  records.server = make('server', server, client);
  records.server.endpoint.start();
  records.client.endpoint.start();
  return { client: records.client, server: records.server };
}

/** Both ended: connected, failed or closed. */
export function settled(record: DtlsRecord): boolean {
  return record.endpoint.state !== 'handshaking' && record.endpoint.state !== 'new';
}
