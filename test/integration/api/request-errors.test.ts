import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, UUID, type TestGateway } from '../../support/gateway.js';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: { api_id?: string; error?: string; auth_id?: string };
  text: string;
}

/**
 * Sends bytes as they are on a TCP connection and reads the answer until the gateway closes
 * it: what fetch would refuse to send, or would correct on the way.
 */
function sendRaw(port: number, request: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('the gateway did not close the connection'));
    }, 5000);
    socket.on('data', (chunk) => chunks.push(chunk));
    // The gateway may close while the rest of a refused request is still on its way.
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('utf8');
      const split = raw.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = raw.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => {
          const colon = line.indexOf(':');
          return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
        }),
      );
      const text = raw.slice(split + 4);
      let body = {};
      try {
        body = JSON.parse(text);
      } catch {
        body = {};
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, text });
    });
    socket.write(request);
  });
}

describe('requests refused before routing', () => {
  let gw: TestGateway;
  let port: number;
  let authorization: string;
  let account: string;
  beforeAll(async () => {
    gw = await startGateway({ listen: true });
    port = (gw.gateway.app.server.address() as AddressInfo).port;
    authorization = `Basic ${Buffer.from(`${gw.main.id}:${gw.main.token}`).toString('base64')}`;
    account = `/v1/Account/${gw.main.id}`;
  });
  afterAll(async () => {
    await gw.close();
  });

  const get = (path: string, headers: string[] = []) =>
    sendRaw(
      port,
      [
        `GET ${path} HTTP/1.1`,
        'Host: 127.0.0.1',
        `Authorization: ${authorization}`,
        'Connection: close',
        ...headers,
        '',
        '',
      ].join('\r\n'),
    );
  const post = (path: string, contentType: string | null, body: string) =>
    sendRaw(
      port,
      [
        `POST ${path} HTTP/1.1`,
        'Host: 127.0.0.1',
        `Authorization: ${authorization}`,
        'Connection: close',
        ...(contentType === null ? [] : [`Content-Type: ${contentType}`]),
        `Content-Length: ${Buffer.byteLength(body)}`,
        '',
        body,
      ].join('\r\n'),
    );

  /** The error envelope and nothing else, with a JSON type and a length that fits. */
  const expectEnvelope = (res: RawResponse, status: number, error: string | RegExp) => {
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
    expect(Object.keys(res.body).sort()).toEqual(['api_id', 'error']);
    expect(res.body.api_id).toMatch(UUID);
    if (typeof error === 'string') expect(res.body.error).toBe(error);
    else expect(res.body.error).toMatch(error);
  };

  it('answers 414 for a request line longer than the header limit', async () => {
    const res = await get(`${account}/Endpoint/?q=${'a'.repeat(20_000)}`);
    expectEnvelope(
      res,
      414,
      "the request's URI is too long: the request line and headers may take at most 16384 bytes",
    );
    expect(res.headers.connection).toBe('close');
  });

  it('answers 414 for a path segment longer than the router takes', async () => {
    const res = await get(`${account}/Endpoint/${'1'.repeat(150)}/`);
    expectEnvelope(
      res,
      414,
      "the request's path is too long: a segment of it exceeds 100 characters",
    );
  });

  it('answers 431 for headers over 16384 bytes', async () => {
    const res = await get(`${account}/Endpoint/`, [`X-Padding: ${'a'.repeat(20_000)}`]);
    expectEnvelope(
      res,
      431,
      "the request's headers exceed 16384 bytes (the request line included)",
    );
    expect(res.headers.connection).toBe('close');
  });

  it('answers 400 for a request that is not HTTP', async () => {
    const res = await sendRaw(port, 'HELLO THERE\r\n\r\n');
    expectEnvelope(res, 400, /^the request is not valid HTTP\/1\.1: /);
  });

  it('answers 400 for a body that is not JSON, saying where it breaks', async () => {
    const res = await post(`${account}/Subaccount/`, 'application/json', '{"name": "a",');
    expectEnvelope(res, 400, /^the body is not valid JSON: .+/);
    // Nothing was created.
    expect((await gw.request('GET', `${account}/Subaccount/`)).body.meta.total_count).toBe(0);
  });

  it('answers 415 for a body of another type, and for a body without a type', async () => {
    expectEnvelope(
      await post(`${account}/Subaccount/`, 'text/xml', '<name>a</name>'),
      415,
      'Content-Type "text/xml" is not supported: send application/json or application/x-www-form-urlencoded',
    );
    // Fastify reads text/plain by default; the API does not.
    expectEnvelope(
      await post(`${account}/Subaccount/`, 'text/plain', 'name=a'),
      415,
      'Content-Type "text/plain" is not supported: send application/json or application/x-www-form-urlencoded',
    );
    expectEnvelope(
      await post(`${account}/Subaccount/`, 'text/plain; charset=utf-8', '{"name": "a"}'),
      415,
      'Content-Type "text/plain; charset=utf-8" is not supported: send application/json or application/x-www-form-urlencoded',
    );
    expectEnvelope(
      await post(`${account}/Subaccount/`, null, 'name=a'),
      415,
      'the request has a body but no Content-Type: send application/json or application/x-www-form-urlencoded',
    );
    // None of them created anything; a form with the same name does.
    expect((await gw.request('GET', `${account}/Subaccount/`)).body.meta.total_count).toBe(0);
    const created = await post(
      `${account}/Subaccount/`,
      'application/x-www-form-urlencoded',
      'name=a',
    );
    expect(created.status).toBe(201);
    expect(
      (await gw.request('DELETE', `${account}/Subaccount/${created.body.auth_id!}/`)).status,
    ).toBe(204);
  });

  it('answers 400 for an empty JSON body on a POST, and takes a bodiless DELETE labelled JSON', async () => {
    expectEnvelope(
      await post(`${account}/Subaccount/`, 'application/json', ''),
      400,
      'the JSON body is empty',
    );
    // As the official Node SDK 0.x sends every DELETE: a JSON type, no length, no body.
    const remove = (id: string, lengthHeader: string[]) =>
      sendRaw(
        port,
        [
          `DELETE ${account}/Subaccount/${id}/ HTTP/1.1`,
          'Host: 127.0.0.1',
          `Authorization: ${authorization}`,
          'Content-Type: application/json',
          'Connection: close',
          ...lengthHeader,
          '',
          '',
        ].join('\r\n'),
      );
    for (const lengthHeader of [[], ['Content-Length: 0']]) {
      const created = await gw.request('POST', `${account}/Subaccount/`, { json: { name: 'd' } });
      const removed = await remove(created.body.auth_id as string, lengthHeader);
      expect(removed.status, removed.text).toBe(204);
      expect(
        (await gw.request('GET', `${account}/Subaccount/${created.body.auth_id}/`)).status,
      ).toBe(404);
    }
  });

  it('answers 413 for a body over 1 MiB', async () => {
    const body = JSON.stringify({ name: 'a'.repeat(1024 * 1024) });
    expectEnvelope(
      await post(`${account}/Subaccount/`, 'application/json', body),
      413,
      'the request body exceeds 1048576 bytes',
    );
  });

  it('answers 400 for a path with broken percent-encoding', async () => {
    expectEnvelope(
      await get(`${account}/Endpoint/%zz/`),
      400,
      `the request's path is not valid percent-encoding: "%zz" is not % and two hexadecimal digits`,
    );
    // Escapes that are well formed but do not decode to UTF-8.
    expectEnvelope(
      await get(`${account}/Endpoint/%C3%28/`),
      400,
      "the request's path is not valid percent-encoding: its escaped bytes are not UTF-8",
    );
  });

  it('keeps answering after refusing requests', async () => {
    const res = await get(`${account}/`);
    expect(res.status).toBe(200);
    expect(res.body.api_id).toMatch(UUID);
  });
});
