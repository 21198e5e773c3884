import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/** What POST Call/ answered for one call. */
export interface PlacedCall {
  n: number;
  /** performance.now() just before the request was written. */
  sentAt: number;
  respondedAt: number;
  status: number;
  requestUuid: string | null;
  /** A connection error or an unreadable answer. */
  error: string | null;
}

export interface PlaceOptions {
  baseUrl: string;
  authId: string;
  authorization: string;
  /** The destination of every call. */
  to: string;
  answerUrl: string;
  hangupUrl: string;
  /** Calls started per second, spread evenly (open loop: no call waits for another). */
  rate: number;
  seconds: number;
  /** The number of the first call; call n carries `X-PH-bench: n`. */
  firstN: number;
}

/** Keep-alive connections to the REST API, reused by every step. */
const agent = new Agent({ keepAlive: true, maxSockets: 64, keepAliveMsecs: 10_000 });

/**
 * Places `rate x seconds` calls with POST Call/ on a fixed schedule: call i is due i / rate
 * seconds after the start, and every call due is sent at once when the generator wakes (every
 * millisecond or so), so a slow answer never delays the next call. Resolves when every request
 * has been answered.
 */
export async function placeCalls(options: PlaceOptions): Promise<{
  calls: PlacedCall[];
  sendSeconds: number;
}> {
  const total = Math.round(options.rate * options.seconds);
  const calls: PlacedCall[] = [];
  const answers: Promise<void>[] = [];
  const path = `/v1/Account/${options.authId}/Call/`;
  const start = performance.now();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(
      total,
      Math.floor(((performance.now() - start) * options.rate) / 1000) + 1,
    );
    while (sent < due) {
      const call: PlacedCall = {
        n: options.firstN + sent,
        sentAt: 0,
        respondedAt: 0,
        status: 0,
        requestUuid: null,
        error: null,
      };
      calls.push(call);
      answers.push(post(options, path, call));
      sent++;
    }
    await sleep(1);
  }
  const sendSeconds = (performance.now() - start) / 1000;
  await Promise.all(answers);
  return { calls, sendSeconds };
}

function post(options: PlaceOptions, path: string, call: PlacedCall): Promise<void> {
  const body = JSON.stringify({
    from: '+14155550100',
    to: options.to,
    answer_url: options.answerUrl,
    hangup_url: options.hangupUrl,
    sip_headers: `bench=${call.n}`,
  });
  const url = new URL(`${options.baseUrl}${path}`);
  return new Promise<void>((resolve) => {
    const req = request(
      {
        agent,
        method: 'POST',
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        headers: {
          authorization: options.authorization,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          call.respondedAt = performance.now();
          call.status = res.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8');
          try {
            const parsed = JSON.parse(text) as { request_uuid?: string };
            call.requestUuid = parsed.request_uuid ?? null;
          } catch {
            call.error = `unreadable answer: ${text.slice(0, 200)}`;
          }
          if (call.status !== 201 && call.error === null) call.error = text.slice(0, 200);
          resolve();
        });
        res.on('error', (error) => {
          call.error = error.message;
          resolve();
        });
      },
    );
    req.on('error', (error) => {
      call.respondedAt = performance.now();
      call.error = error.message;
      resolve();
    });
    call.sentAt = performance.now();
    req.end(body);
  });
}
