import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';

/** Debian's chromium, the browser the tests drive. */
const CHROMIUM = '/usr/bin/chromium';

export interface HeadlessBrowser {
  browser: Browser;
  close(): Promise<void>;
}

/**
 * Chromium without a window, on a fresh profile, with every call home it makes by itself
 * (component updates, sync, field trials, QUIC probes) turned off: what it asks for is what
 * the page asked for. `args` adds switches, such as the fake microphone of WebRTC tests.
 */
export async function launchHeadlessBrowser(
  options: { args?: readonly string[] } = {},
): Promise<HeadlessBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'voxgate-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
      ...(options.args ?? []),
    ],
  });
  return {
    browser,
    close: async () => {
      await browser.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
