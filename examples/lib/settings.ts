import { readFileSync } from 'node:fs';

/**
 * What every example reads: flags (`--name value`) first, then the environment, then a
 * default. Nothing here is specific to voxgate's internals: it is what an application of
 * your own would do with the gateway's URL and the main account's credentials.
 */

/** The value of `--name value` (or `--name=value`) on the command line, if given. */
export function flag(name: string): string | undefined {
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === `--${name}`) return args[i + 1];
    if (arg.startsWith(`--${name}=`)) return arg.slice(name.length + 3);
  }
  return undefined;
}

/** True when `--name` is on the command line. */
export function hasFlag(name: string): boolean {
  return process.argv.slice(2).includes(`--${name}`);
}

/** The first argument that is neither a flag nor a flag's value. */
export function positional(valueFlags: readonly string[]): string | undefined {
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg.startsWith('--')) {
      if (!arg.includes('=') && valueFlags.includes(arg.slice(2))) i++;
      continue;
    }
    return arg;
  }
  return undefined;
}

/** A setting: `--flag`, else the environment variable, else the default. */
export function setting(flagName: string, envName: string, fallback: string): string {
  return flag(flagName) ?? process.env[envName] ?? fallback;
}

/** A whole number setting, refused with a clear message when it is not one. */
export function numberSetting(flagName: string, envName: string, fallback: number): number {
  const raw = setting(flagName, envName, String(fallback));
  const value = Number(raw);
  if (!Number.isFinite(value)) {
    console.error(`Expected a number for --${flagName} (${envName}) but received ${raw}`);
    process.exit(2);
  }
  return value;
}

/** The gateway's REST base, e.g. http://127.0.0.1:8080 (`--gateway`, `VOXGATE_URL`). */
export function gatewayUrl(): string {
  return setting('gateway', 'VOXGATE_URL', 'http://127.0.0.1:8080').replace(/\/+$/, '');
}

export interface Credentials {
  authId: string;
  authToken: string;
}

/**
 * The main account's credentials: `VOXGATE_AUTH_ID` and `VOXGATE_AUTH_TOKEN` from the
 * environment, else the file the gateway wrote on its first start (`--account-file`,
 * `VOXGATE_ACCOUNT_FILE`, default `data/main-account.env`).
 */
export function credentials(): Credentials {
  const fromEnv = { id: process.env.VOXGATE_AUTH_ID, token: process.env.VOXGATE_AUTH_TOKEN };
  if (fromEnv.id && fromEnv.token) return { authId: fromEnv.id, authToken: fromEnv.token };
  const path = setting('account-file', 'VOXGATE_ACCOUNT_FILE', 'data/main-account.env');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    console.error(
      `No credentials: set VOXGATE_AUTH_ID and VOXGATE_AUTH_TOKEN, or point --account-file at ` +
        `the main-account.env the gateway wrote on its first start (${path}: ` +
        `${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
    process.exit(2);
  }
  const value = (name: string) =>
    new RegExp(`^${name}=(.*)$`, 'm')
      .exec(text)?.[1]
      ?.trim()
      .replace(/^['"]|['"]$/g, '');
  const authId = value('VOXGATE_AUTH_ID');
  const authToken = value('VOXGATE_AUTH_TOKEN');
  if (!authId || !authToken) {
    console.error(`${path} has no VOXGATE_AUTH_ID and VOXGATE_AUTH_TOKEN lines`);
    process.exit(2);
  }
  return { authId, authToken };
}

/** Escapes text for an XML attribute or element. */
export function xmlEscape(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

/** Reads an HTTP request's body as text. */
export async function readBody(request: AsyncIterable<Buffer | string>): Promise<string> {
  let body = '';
  for await (const chunk of request) body += String(chunk);
  return body;
}

/**
 * The parameters the gateway sent with a callback: the query string and, for a POST, the
 * form-encoded body.
 */
export async function callbackParams(request: {
  url?: string;
  method?: string;
  [Symbol.asyncIterator](): AsyncIterator<Buffer | string>;
}): Promise<Record<string, string>> {
  const url = new URL(request.url ?? '/', 'http://local');
  const params = Object.fromEntries(url.searchParams);
  if (request.method === 'POST') {
    Object.assign(params, Object.fromEntries(new URLSearchParams(await readBody(request))));
  }
  return params;
}

/** The time of day, for the lines an example prints. */
export function now(): string {
  return new Date().toISOString().slice(11, 23);
}
