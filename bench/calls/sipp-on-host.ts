import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SIPP_SCENARIO_DIR } from '../../test/support/sipp.js';

const LOOPBACK = '127.0.0.1';

/**
 * SIPp arguments that bind a calling SIPp, its control socket and its media on `host` instead
 * of loopback (the test helper's own `-i`, `-ci` and `-mi` come first; SIPp keeps the last of
 * each). None for loopback, so a local run starts SIPp exactly as before.
 */
export function sippListenArgs(host: string): string[] {
  return host === LOOPBACK ? [] : ['-i', host, '-ci', host, '-mi', host];
}

/** A carrier scenario for a bench listening on `host`, and how to remove it when it is a copy. */
export interface CarrierScenario {
  /** A file name in fixtures/sipp/, or the path of a copy. */
  scenario: string;
  /** What the results say the carrier ran. */
  description: string;
  remove(): void;
}

/**
 * The answering carrier stays on loopback (the test helper waits for it there) behind the INVITE
 * tap. fixtures/sipp/carrier-answer.xml sends the call's audio to 127.0.0.1 (its SDP's c= line)
 * and its ACK and BYE to SIPp itself (its Contact): on loopback as it is. For a bench listening
 * on another address, a copy sends the audio to `host` (where the RTP sink listens) and names
 * the tap at `host:tapPort` as its Contact, so the ACK and the BYE reach the carrier through it.
 */
export function carrierScenario(host: string, tapPort: number): CarrierScenario {
  const name = 'carrier-answer.xml';
  if (host === LOOPBACK)
    return { scenario: name, description: `fixtures/sipp/${name}`, remove: () => {} };
  const replacements: [string, string][] = [
    [`c=IN IP4 ${LOOPBACK}`, `c=IN IP4 ${host}`],
    ['<sip:carrier@[local_ip]:[local_port];', `<sip:carrier@${host}:${tapPort};`],
  ];
  let text = readFileSync(join(SIPP_SCENARIO_DIR, name), 'utf8');
  for (const [from, to] of replacements) {
    if (!text.includes(from)) throw new Error(`fixtures/sipp/${name} no longer has ${from}`);
    text = text.replaceAll(from, to);
  }
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-carrier-'));
  const path = join(dir, name);
  writeFileSync(path, text);
  return {
    scenario: path,
    description: `fixtures/sipp/${name}, its SDP address set to ${host} and its Contact to the INVITE tap`,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
