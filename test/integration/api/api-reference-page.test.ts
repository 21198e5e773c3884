import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchHeadlessBrowser, type HeadlessBrowser } from '../../support/headless-browser.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';

/**
 * /docs in a real browser: the reference renders from the gateway alone (its scripts, styles
 * and the OpenAPI document all from the gateway), lists the operations by their summaries, and
 * the page asks nothing of any other host.
 */
/**
 * What the functions run in the page use of its DOM: the project compiles without the DOM
 * library, and these say as much as the page code needs.
 */
interface PageNode {
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(selector: string): PageNode | null;
  click(): void;
}
declare const document: {
  querySelector(selector: string): PageNode | null;
  querySelectorAll(selector: string): Iterable<PageNode>;
};

let gw: TestGateway;
let chromium: HeadlessBrowser;
let base: string;

beforeAll(async () => {
  gw = await startGateway({ listen: true });
  const { port } = gw.gateway.app.server.address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
  chromium = await launchHeadlessBrowser();
}, 60_000);

afterAll(async () => {
  await chromium?.close();
  await gw?.close();
});

/** Requests that stay on this machine: the gateway on loopback, or inline data. */
const onLoopback = (url: string): boolean => {
  const { protocol, hostname } = new URL(url);
  return protocol === 'data:' || hostname === '127.0.0.1';
};

describe('the API reference at /docs', () => {
  it('renders every operation by its summary, without credentials, from loopback alone', async () => {
    const page = await chromium.browser.newPage();
    const asked: string[] = [];
    const offLoopback: string[] = [];
    const errors: string[] = [];
    await page.setRequestInterception(true);
    page.on('request', (request) => {
      const url = request.url();
      asked.push(url);
      if (onLoopback(url)) return void request.continue();
      offLoopback.push(url);
      void request.abort('blockedbyclient');
    });
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(String(error)));

    const answer = await page.goto(`${base}/docs`, { waitUntil: 'load' });
    expect(answer?.status()).toBe(200);
    expect(answer?.headers()['content-type']).toBe('text/html; charset=utf-8');

    // The create-call operation, found by its method and path in the rendered list: its
    // summary, and once opened the body the gateway validates (answer_url among its fields).
    const createCall = { method: 'POST', path: '/v1/Account/{auth_id}/Call/' };
    const operation = (target: typeof createCall, part: string, open: boolean) => {
      const block = [...document.querySelectorAll('.opblock')].find(
        (b) =>
          b.querySelector('.opblock-summary-method')?.textContent === target.method &&
          b.querySelector('.opblock-summary-path')?.getAttribute('data-path') === target.path,
      );
      if (block && open) block.querySelector('.opblock-summary-control')!.click();
      return block?.querySelector(part)?.textContent ?? null;
    };
    await page.waitForFunction(
      `(${operation})(${JSON.stringify(createCall)}, '.opblock-summary-description', false) !== null`,
      { timeout: 20_000 },
    );
    expect(await page.evaluate(operation, createCall, '.opblock-summary-description', false)).toBe(
      'Make an outbound call',
    );
    await page.evaluate(operation, createCall, '.opblock-summary', true);
    await page.waitForFunction(
      `(${operation})(${JSON.stringify(createCall)}, '.opblock-body', false)?.includes('answer_url')`,
      { timeout: 10_000 },
    );

    // Every operation of the document is on the page, each with its summary.
    const documented = (await gw.request('GET', '/docs/json', { as: null })).body.paths as Record<
      string,
      Record<string, { summary: string }>
    >;
    const expected = Object.values(documented)
      .flatMap((item) => Object.values(item).map((op) => op.summary))
      .sort();
    const shown = await page.$$eval('.opblock-summary-description', (nodes) =>
      nodes.map((node) => node.textContent ?? ''),
    );
    expect(shown.sort()).toEqual(expected);

    expect(offLoopback).toEqual([]);
    expect(asked.map((url) => (url.startsWith('data:') ? 'data:' : new URL(url).pathname))).toEqual(
      expect.arrayContaining([
        '/docs',
        '/docs/static/swagger-ui.css',
        '/docs/static/swagger-ui-bundle.js',
        '/docs/static/swagger-ui-standalone-preset.js',
        '/docs/static/swagger-initializer.js',
        '/docs/json',
      ]),
    );
    // Nothing the page needed was refused (its content security policy included).
    expect(errors).toEqual([]);
    await page.close();
  });
});
