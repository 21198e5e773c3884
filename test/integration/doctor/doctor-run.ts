import { spawn } from 'node:child_process';

/** What one `node --import tsx src/doctor/main.ts` printed, and its exit status. */
export interface DoctorRun {
  status: number | null;
  stdout: string;
  stderr: string;
  lines: string[];
  /** The line of the check `name` (`http`, `sip-udp`, `smpp:carrier1`...). */
  line(name: string): string;
}

/** Runs the doctor as its own process with only these VOXGATE_* settings (and PATH). */
export async function runDoctor(env: Record<string, string>): Promise<DoctorRun> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('VOXGATE_')),
  );
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/doctor/main.ts'], {
    env: { ...clean, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  const status = await new Promise<number | null>((resolve) =>
    child.once('close', (code) => resolve(code)),
  );
  const lines = stdout.split('\n').filter(Boolean);
  return {
    status,
    stdout,
    stderr,
    lines,
    line: (name) => {
      const found = lines.find((l) => l.split(/\s+/)[1] === name);
      if (!found) throw new Error(`no line for ${name} in:\n${stdout}${stderr}`);
      return found;
    },
  };
}
