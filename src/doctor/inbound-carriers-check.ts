import type { Config } from '../config/config.js';
import { ok, warn, type CheckResult } from './check-result.js';

/** Loopback, or an address only this machine's networks reach (RFC 1918, RFC 4193, link-local). */
const PRIVATE =
  /^(127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|169\.254\.|::1$|f[cd][0-9a-f]{2}:|fe80:|localhost$)/i;

/**
 * With VOXGATE_INBOUND_CARRIERS=open any host that reaches the SIP port may call the numbers
 * (and through them the accounts' trunks): fine on loopback or a private network, worth a
 * warning anywhere else (a wildcard address listens on every network, public ones included).
 */
export function checkInboundCarriers(config: Config): CheckResult {
  if (config.inboundCarriers === 'enforce') {
    return ok(
      'inbound-carriers',
      "calls to numbers are taken from their IncomingCarrier's IP set only",
    );
  }
  if (PRIVATE.test(config.sipHost)) {
    return ok(
      'inbound-carriers',
      `VOXGATE_INBOUND_CARRIERS=open: any address may call the numbers, and SIP listens on ${config.sipHost} only`,
    );
  }
  return warn(
    'inbound-carriers',
    `VOXGATE_INBOUND_CARRIERS=open while SIP listens on ${config.sipHost}: any host that reaches ` +
      'the SIP port may call the numbers and their trunks; create IncomingCarriers and remove ' +
      'the setting (its default, enforce, takes calls from their IP sets only)',
  );
}
