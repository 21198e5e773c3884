import { constants, accessSync, statSync } from 'node:fs';
import { SettingError } from '../../core/setting-error.js';

/**
 * The settings of WebRTC legs' transport (DTLS-SRTP and ICE consent), read once at start (config/config.ts reads the environment through
 * this):
 *
 * - `VOXGATE_DTLS_CERT`, `VOXGATE_DTLS_KEY`: PEM files of the certificate voxgate presents in
 *   DTLS handshakes and its private key, set together. Unset, a new self-signed ECDSA P-256
 *   certificate is made at each start; its SHA-256 fingerprint goes in every SDP. A fixed
 *   certificate keeps the fingerprint the same across restarts and nodes.
 * - `VOXGATE_DTLS_HANDSHAKE_TIMEOUT`: seconds a DTLS handshake may take, retransmissions
 *   included, before the call's media fails (10).
 * - `VOXGATE_ICE_CONSENT_TIMEOUT`: seconds without a valid ICE check from a WebRTC peer before
 *   its consent is lost and the call ends 6020 (RFC 7675 5.1: 30). A closed tab or a phone that
 *   left the network sends no BYE; this is how long its call outlives it.
 */
export interface DtlsSettings {
  certificateFiles: { certFile: string; keyFile: string } | null;
  handshakeTimeoutMs: number;
  consentTimeoutMs: number;
}

export const DEFAULT_DTLS_HANDSHAKE_TIMEOUT_MS = 10_000;
export const DEFAULT_ICE_CONSENT_TIMEOUT_MS = 30_000;

type Env = Record<string, string | undefined>;

export function readDtlsSettings(env: Env): DtlsSettings {
  const certFile = env.VOXGATE_DTLS_CERT || null;
  const keyFile = env.VOXGATE_DTLS_KEY || null;
  if ((certFile === null) !== (keyFile === null)) {
    throw new SettingError(
      certFile === null ? 'VOXGATE_DTLS_CERT' : 'VOXGATE_DTLS_KEY',
      'must be set together with the other of VOXGATE_DTLS_CERT and VOXGATE_DTLS_KEY',
      '',
    );
  }
  if (certFile !== null) readable('VOXGATE_DTLS_CERT', certFile);
  if (keyFile !== null) readable('VOXGATE_DTLS_KEY', keyFile);
  return {
    certificateFiles: certFile && keyFile ? { certFile, keyFile } : null,
    handshakeTimeoutMs: seconds(
      env,
      'VOXGATE_DTLS_HANDSHAKE_TIMEOUT',
      DEFAULT_DTLS_HANDSHAKE_TIMEOUT_MS,
    ),
    consentTimeoutMs: seconds(env, 'VOXGATE_ICE_CONSENT_TIMEOUT', DEFAULT_ICE_CONSENT_TIMEOUT_MS),
  };
}

/** A whole number of seconds from 1 to 300, in ms; `fallbackMs` when unset. */
function seconds(env: Env, variable: string, fallbackMs: number): number {
  const raw = env[variable];
  if (raw === undefined || raw === '') return fallbackMs;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 300) {
    throw new SettingError(variable, 'must be a whole number of seconds from 1 to 300', raw);
  }
  return Number(raw) * 1000;
}

function readable(variable: string, path: string): void {
  try {
    accessSync(path, constants.R_OK);
    if (statSync(path).isFile()) return;
  } catch {
    // Reported below, as for a directory.
  }
  throw new SettingError(variable, 'must be the path of a readable PEM file', path);
}
