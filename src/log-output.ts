import { PinoPretty } from 'pino-pretty';
import type { DestinationStream } from 'pino';
import { ConfigError, readFileDefaults } from './config/config.js';

/**
 * VOXGATE_LOG_FORMAT: how log lines are written to stdout.
 *
 *   json    one JSON object per line (pino's own): what a log collector or `jq` reads
 *   pretty  one readable line per entry (pino-pretty): time, level, message, then its fields
 *
 * Unset: pretty when stdout is a terminal, json otherwise (a container, a pipe, a file). The
 * level is VOXGATE_LOG_LEVEL (config.ts); the lines and fields are the same in both forms.
 */
export type LogFormat = 'json' | 'pretty';

const FORMATS: readonly LogFormat[] = ['json', 'pretty'];

export function logFormat(
  processEnv: Record<string, string | undefined>,
  terminal: boolean,
): LogFormat {
  const env = { ...readFileDefaults(processEnv), ...processEnv };
  const raw = env.VOXGATE_LOG_FORMAT;
  if (raw === undefined || raw === '') return terminal ? 'pretty' : 'json';
  if (!(FORMATS as readonly string[]).includes(raw))
    throw new ConfigError('VOXGATE_LOG_FORMAT', `must be one of ${FORMATS.join(', ')}`, raw);
  return raw as LogFormat;
}

/**
 * Where the logger writes: undefined keeps pino's own JSON on stdout; `pretty` formats each
 * line on the main thread, synchronously, as pino writes stdout (no transport thread to lose
 * lines at exit). Colours only on a terminal.
 */
export function logDestination(
  format: LogFormat,
  terminal: boolean,
): DestinationStream | undefined {
  if (format === 'json') return undefined;
  return PinoPretty({
    colorize: terminal,
    sync: true,
    destination: 1,
    ignore: 'pid,hostname',
    // A call is three entries: on a terminal each stays one line, its fields after the message.
    singleLine: true,
    translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l',
  });
}
