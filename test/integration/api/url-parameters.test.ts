import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { until } from '../../support/wait.js';

/**
 * URLs one parser reads and another refuses: an unclosed IPv6 literal (RFC 3986 lets it
 * through a loose pattern, the WHATWG parser throws) and an empty authority (WHATWG reads
 * `http:///x` as the host `x`, RFC 3986 gives it no host).
 */
const BAD_URLS = ['http://[::1', 'http:///x'];
const NUMBER = '14155550100';

describe('every URL parameter follows one rule', () => {
  let gw: TestGateway;
  let base: string;
  beforeAll(async () => {
    gw = await startGateway();
    base = `/v1/Account/${gw.main.id}`;
    const added = await gw.request('POST', `${base}/Number/`, {
      json: { numbers: NUMBER, carrier: 'c', region: 'r' },
    });
    expect(added.status).toBe(201);
  });
  afterAll(async () => {
    await gw.close();
  });

  const expectRefused = (
    res: { status: number; body: { error?: string } },
    message: string,
  ): void => {
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(message);
  };

  it('refuses both URLs in every URL parameter of an application, and creates none', async () => {
    for (const url of BAD_URLS) {
      for (const name of ['answer_url', 'hangup_url', 'fallback_answer_url', 'message_url']) {
        const body = { app_name: 'a', answer_url: 'https://example.com/answer', [name]: url };
        expectRefused(
          await gw.request('POST', `${base}/Application/`, { json: body }),
          `invalid ${name}: must be an http or https URL${name === 'answer_url' ? '' : ', or empty'}`,
        );
      }
    }
    expect((await gw.request('GET', `${base}/Application/`)).body.meta.total_count).toBe(0);
  });

  it('refuses both URLs in an application update, and leaves it as it was', async () => {
    const created = await gw.request('POST', `${base}/Application/`, {
      json: { app_name: 'kept', answer_url: 'https://example.com/answer' },
    });
    expect(created.status).toBe(201);
    const path = `${base}/Application/${created.body.app_id}/`;
    for (const url of BAD_URLS) {
      expectRefused(
        await gw.request('POST', path, { form: { answer_url: url } }),
        'invalid answer_url: must be an http or https URL',
      );
    }
    expect((await gw.request('GET', path)).body.answer_url).toBe('https://example.com/answer');
    expect((await gw.request('DELETE', path)).status).toBe(204);
  });

  it('refuses both URLs in every URL parameter of a call, and places none', async () => {
    const names = ['answer_url', 'ring_url', 'hangup_url', 'fallback_url', 'machine_detection_url'];
    for (const url of BAD_URLS) {
      for (const name of names) {
        const body = {
          from: NUMBER,
          to: '14155550111',
          answer_url: 'https://example.com/answer',
          [name]: url,
        };
        expectRefused(
          await gw.request('POST', `${base}/Call/`, { json: body }),
          `invalid ${name}: must be an http or https URL`,
        );
      }
    }
    expect((await gw.request('GET', `${base}/Call/?status=queued`)).body.calls).toEqual([]);
    expect((await gw.request('GET', `${base}/Call/?status=live`)).body.calls).toEqual([]);
    expect((await gw.request('GET', `${base}/Call/`)).body.meta.total_count).toBe(0);
    // A call that is placed does leave a record here (it fails: its endpoint is not registered).
    const endpoint = await gw.request('POST', `${base}/Endpoint/`, {
      json: { username: 'desk', password: 'Desk-phone-9', alias: 'desk' },
    });
    expect(endpoint.status).toBe(201);
    const placed = await gw.request('POST', `${base}/Call/`, {
      json: {
        from: NUMBER,
        to: `sip:${endpoint.body.username}@127.0.0.1`,
        answer_url: 'https://example.com/answer',
      },
    });
    expect(placed.status).toBe(201);
    await until(async () => (await gw.request('GET', `${base}/Call/`)).body.meta.total_count === 1);
  });

  it("refuses both URLs in a message's url and media_urls, and sends nothing", async () => {
    for (const url of BAD_URLS) {
      expectRefused(
        await gw.request('POST', `${base}/Message/`, {
          json: { src: NUMBER, dst: '14155550111', text: 'hi', url },
        }),
        'url must be an http or https URL',
      );
      expectRefused(
        await gw.request('POST', `${base}/Message/`, {
          json: {
            src: NUMBER,
            dst: '14155550111',
            type: 'mms',
            media_urls: ['https://example.com/a.png', url],
          },
        }),
        `media_urls must hold http or https URLs: ${JSON.stringify(url)} is not one`,
      );
    }
    expect((await gw.request('GET', `${base}/Message/`)).body.meta.total_count).toBe(0);
  });

  it("refuses both URLs in a stream's status_callback_url before looking for the call", async () => {
    for (const url of BAD_URLS) {
      expectRefused(
        await gw.request('POST', `${base}/Call/00000000-0000-4000-8000-000000000000/Stream/`, {
          json: { service_url: 'wss://example.com/s', status_callback_url: url },
        }),
        'invalid status_callback_url: must be an http or https URL',
      );
      expectRefused(
        await gw.request('POST', `${base}/Call/00000000-0000-4000-8000-000000000000/Stream/`, {
          json: { service_url: url.replace('http', 'wss') },
        }),
        'invalid service_url: must be a ws:// or wss:// URL',
      );
    }
  });
});
