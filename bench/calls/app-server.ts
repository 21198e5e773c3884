import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

/** A hangup callback as the application received it. */
export interface Hangup {
  requestUuid: string;
  callUuid: string;
  direction: string;
  causeCode: number;
  causeName: string;
  source: string;
  /** performance.now() when the callback arrived. */
  receivedAt: number;
}

/**
 * The customer's application: answer XML by path, and every hangup callback recorded. It does
 * no more than a real application would have to, so that its share of the two cores is small.
 */
export interface AppServer {
  baseUrl: string;
  hangups: Hangup[];
  /** Requests to a path nobody serves, or that could not be read. */
  unexpected: number;
  /** Called for each hangup as it arrives. */
  onHangup(listener: ((hangup: Hangup) => void) | null): void;
  close(): Promise<void>;
}

/** Serves `documents` on `host` (an address the gateway can reach), on a free port. */
export async function startAppServer(
  documents: Record<string, string>,
  host = '127.0.0.1',
): Promise<AppServer> {
  let listener: ((hangup: Hangup) => void) | null = null;
  const state = { unexpected: 0 };
  const hangups: Hangup[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://app');
      const document = documents[url.pathname];
      if (document !== undefined) {
        res.writeHead(200, { 'content-type': 'text/xml' }).end(document);
        return;
      }
      if (url.pathname === '/hangup') {
        const params = new URLSearchParams(url.search);
        for (const [k, v] of new URLSearchParams(Buffer.concat(chunks).toString('utf8')))
          params.set(k, v);
        const hangup: Hangup = {
          requestUuid: params.get('RequestUUID') ?? '',
          callUuid: params.get('CallUUID') ?? '',
          direction: params.get('Direction') ?? '',
          causeCode: Number(params.get('HangupCauseCode')),
          causeName: params.get('HangupCauseName') ?? '',
          source: params.get('HangupSource') ?? '',
          receivedAt: performance.now(),
        };
        hangups.push(hangup);
        listener?.(hangup);
        res.writeHead(200).end();
        return;
      }
      state.unexpected++;
      res.writeHead(404).end();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://${host}:${port}`,
    hangups,
    get unexpected() {
      return state.unexpected;
    },
    onHangup: (l) => {
      listener = l;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
