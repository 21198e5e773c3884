import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { until } from './wait.js';

/** The SMSC example Debian's libnet-smpp-perl ships (Net::SMPP in the SMSC role). */
export const PERL_SMSC_EXAMPLE = '/usr/share/doc/libnet-smpp-perl/examples/smsc.pl';

/**
 * Runs Net::SMPP's example SMSC on 127.0.0.1 and a free port: the script as shipped, with only
 * its fixed host and port changed. It answers every bind and every submit_sm (always with the
 * message id 123456789) and prints one line per PDU it reads.
 */
export class PerlSmsc {
  private output = '';

  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    readonly port: number,
  ) {
    child.stdout?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
  }

  static available(): boolean {
    return existsSync(PERL_SMSC_EXAMPLE);
  }

  static async start(): Promise<PerlSmsc> {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'voxgate-perl-smsc-'));
    const script = readFileSync(PERL_SMSC_EXAMPLE, 'utf8')
      .replace(/^\$host = .*$/m, "$host = '127.0.0.1';")
      .replace(/^\$port = .*$/m, `$port = ${port};`);
    writeFileSync(join(dir, 'smsc.pl'), script);
    // Unbuffered output, so each line is seen as the SMSC prints it.
    const run = '$| = 1; $0 = shift; do $0; die $@ if $@;';
    const child = spawn('perl', ['-e', run, join(dir, 'smsc.pl')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const smsc = new PerlSmsc(child, dir, port);
    await until(() => smsc.output.includes('Entering accept loop'), 10_000);
    return smsc;
  }

  /** What the SMSC printed: one `Received #seq cmd:name` line per PDU, and its warnings. */
  get log(): string {
    return this.output;
  }

  async stop(): Promise<void> {
    // The accept loop forks a child per connection; they share the process group.
    this.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 50));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
