import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePortBlock } from './free-port.js';
import { type SipTarget, type SipTransport } from './sipp.js';

/**
 * baresip 1.0.0 (Debian `baresip-core`) as a real softphone: one account registering with a
 * registrar on loopback, started headless (no terminal, no sound card) from a config directory
 * written into a temporary directory.
 *
 * Audio without hardware: the source is the ausine module (a 440 Hz tone, 48 kHz stereo,
 * resampled by baresip to the codec) and the player is an aubridge device nobody reads. Codecs:
 * PCMU and PCMA (g711). No UI module reads stdin; the menu module prints call events.
 *
 * What baresip prints, and this harness reads:
 *   baresip is ready.                                           (after loading)
 *   alice@127.0.0.1: {0/UDP/v4} 200 OK (server) [1 binding]     (registered)
 *   reg: sip:alice@127.0.0.1:5060: 403 Forbidden (server)       (refused)
 *   reg: sip:alice@127.0.0.1:5060: Register: Function not implemented
 *     (gave up: libre's digest client answers only MD5 and fails on any other algorithm)
 * Error lines come wrapped in ANSI colour codes, which output() removes.
 */
export interface BaresipOptions {
  username: string;
  password: string;
  registrar: SipTarget;
  /** tls: SIP over TLS to the registrar (its certificate is not checked by baresip 1.0.0). */
  transport?: SipTransport | 'tls';
  /** Re-registration interval in seconds (regint). Default 3600. */
  registerIntervalS?: number;
  /** auto: answer incoming calls at once. Default manual. */
  answerMode?: 'manual' | 'early' | 'auto';
  /** More ;name=value parameters for the account line. */
  accountParams?: string[];
  /** More config lines ("name value"). */
  configLines?: string[];
  /** Commands run once it has started (`-e`), e.g. `/dial sip:14155550111@127.0.0.1`. */
  commands?: string[];
}

export interface Baresip {
  /** Its SIP port on 127.0.0.1 (UDP and TCP). */
  sipPort: number;
  /** Everything printed so far, without colour codes. */
  output(): string;
  /** Resolves with the first line matching pattern printed after the call (or already). */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves on a 2xx to its REGISTER; rejects with baresip's line if refused or failed. */
  waitForRegistered(timeoutMs?: number): Promise<string>;
  /** SIGTERM (baresip unregisters, then exits), again after 3 s, SIGKILL after 5 s. */
  stop(): Promise<void>;
}

const REGISTERED = /^\S+: \{\d+\/(UDP|TCP|TLS)\/v[46]\} 2\d\d /;
const REGISTER_FAILED = /^reg: \S+: /;
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/**
 * A port free for baresip's UDP and TCP listeners whose next port is free too: baresip binds
 * SIP over TLS there, and a start fails when another test holds it.
 */
function freeSipPort(): Promise<number> {
  return freePortBlock(2, ['tcp', 'udp']);
}

export async function startBaresip(options: BaresipOptions): Promise<Baresip> {
  const { username, password, registrar, transport = 'udp' } = options;
  for (const [name, value] of Object.entries({ username, password })) {
    if (!/^[^\s;<>"@]+$/.test(value))
      throw new Error(`Expected a ${name} without spaces, ';', '<', '>', '"' or '@': ${value}`);
  }
  const dir = await mkdtemp(join(tmpdir(), 'voxgate-baresip-'));
  const sipPort = await freeSipPort();
  const config = [
    'poll_method epoll',
    `sip_listen 127.0.0.1:${sipPort}`,
    'net_interface 127.0.0.1', // else it also binds, and puts in SDP, the default interface
    'call_local_timeout 120',
    'call_max_calls 4',
    'audio_player aubridge,voxgate-null',
    'audio_alert aubridge,voxgate-null',
    'audio_source ausine,440',
    'ausrc_srate 48000', // ausine produces only 48 kHz stereo
    'ausrc_channels 2',
    'statmode_default off', // no per-second status line during calls
    'module_path /usr/lib/baresip/modules',
    'module g711.so',
    'module ausine.so',
    'module aubridge.so',
    'module_tmp account.so',
    'module_app menu.so',
    ...(options.configLines ?? []),
  ];
  const account = [
    `<sip:${username}@${registrar.host}:${registrar.port};transport=${transport}>`,
    `auth_pass=${password}`,
    `regint=${options.registerIntervalS ?? 3600}`,
    `answermode=${options.answerMode ?? 'manual'}`,
    ...(options.accountParams ?? []),
  ].join(';');
  await writeFile(join(dir, 'config'), `${config.join('\n')}\n`);
  await writeFile(join(dir, 'accounts'), `${account}\n`);
  await writeFile(join(dir, 'contacts'), '');

  const commands = (options.commands ?? []).flatMap((command) => ['-e', command]);
  const child = spawn('baresip', ['-f', dir, ...commands], { stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let output = '';
  const waiters = new Set<() => void>();
  const append = (chunk: Buffer) => {
    output += String(chunk).replace(/\x1b\[[0-9;]*m/g, '');
    for (const wake of waiters) wake();
  };
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  const exited = new Promise<void>((resolve) => {
    child.once('error', (error) => {
      output += `\nbaresip did not start (is baresip-core installed?): ${error.message}\n`;
      resolve();
    });
    child.once('close', () => resolve());
  }).finally(() => live.delete(child));
  const running = () => child.exitCode === null && child.signalCode === null;

  const waitForLine = (pattern: RegExp, timeoutMs = 10_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const line = output.split(/\r?\n|\r/).find((l) => pattern.test(l));
        if (line !== undefined) return finish(() => resolve(line));
        if (!running())
          finish(() => reject(new Error(`baresip exited before printing ${pattern}:\n${output}`)));
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`baresip printed no ${pattern}:\n${output}`))),
        timeoutMs,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        waiters.delete(check);
        settle();
      };
      waiters.add(check);
      void exited.then(check);
      check();
    });

  const stop = async () => {
    if (running()) {
      child.kill('SIGTERM');
      const again = setTimeout(() => child.kill('SIGTERM'), 3000); // a second signal forces it
      const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(again);
      clearTimeout(kill);
    }
    await exited;
    await rm(dir, { recursive: true, force: true });
  };

  try {
    await waitForLine(/^baresip is ready\./);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    sipPort,
    output: () => output,
    waitForLine,
    waitForRegistered: async (timeoutMs = 10_000) => {
      const line = await waitForLine(
        new RegExp(`${REGISTERED.source}|${REGISTER_FAILED.source}`),
        timeoutMs,
      );
      if (!REGISTERED.test(line)) throw new Error(`baresip did not register: ${line}`);
      return line;
    },
    stop,
  };
}
