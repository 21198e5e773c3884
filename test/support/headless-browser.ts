import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';

/** Debian's chromium, the browser the tests drive. */
const CHROMIUM = '/usr/bin/chromium';
/** Debian's Firefox ESR, driven over WebDriver BiDi. */
const FIREFOX = '/usr/bin/firefox-esr';

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

/**
 * Firefox without a window, on a fresh profile that puppeteer makes (its defaults turn off
 * updates, telemetry and the other calls home). `prefs` adds preferences, such as the fake
 * microphone of WebRTC tests.
 */
export async function launchHeadlessFirefox(
  options: {
    prefs?: Record<string, string | number | boolean>;
    acceptInsecureCerts?: boolean;
  } = {},
): Promise<HeadlessBrowser> {
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX,
    headless: true,
    ...(options.acceptInsecureCerts && { acceptInsecureCerts: true }),
    extraPrefsFirefox: options.prefs ?? {},
  });
  return { browser, close: () => browser.close() };
}
