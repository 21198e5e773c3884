/** `YYYY-MM-DD HH:MM:SS+00:00`, the time format of the records. */
export function formatTime(ms: number | null): string | null {
  if (ms === null) return null;
  return `${utcSecond(ms)}+00:00`;
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, the time format of callback parameters (StartTime...). */
export function formatCallbackTime(ms: number): string {
  return utcSecond(ms);
}

/** The last second formatted, and its text. */
let last = { second: Number.NaN, text: '' };

/**
 * The UTC second `ms` falls in, as `YYYY-MM-DD HH:MM:SS`. A call formats the same few seconds
 * several times (its record, each callback's times), so the last one is kept.
 */
function utcSecond(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== last.second) {
    const iso = new Date(second * 1000).toISOString();
    last = { second, text: `${iso.slice(0, 10)} ${iso.slice(11, 19)}` };
  }
  return last.text;
}
