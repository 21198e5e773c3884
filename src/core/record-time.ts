/** `YYYY-MM-DD HH:MM:SS+00:00`, the time format of the records. */
export function formatTime(ms: number | null): string | null {
  if (ms === null) return null;
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, '+00:00');
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, the time format of callback parameters (StartTime...). */
export function formatCallbackTime(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, '');
}
