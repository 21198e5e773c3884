/** `2024-08-21 18:28:49.244057+00:00`: the time format of message records. */
export function recordTime(ms: number | null): string | null {
  if (ms === null) return null;
  return `${callbackTime(ms)}+00:00`;
}

/** `2024-08-21 18:28:49.244000`: the time format of message callbacks (microseconds). */
export function callbackTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}000`;
}

/** `yyyy-MM-dd HH:mm[:ss[.ffffff]]` (UTC) of a list filter → ms, or null when it is not one. */
export function parseFilterTime(value: string): number | null {
  const match = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2})(:\d{2}(\.\d{1,6})?)?(\+00:00|Z)?$/.exec(
    value.trim(),
  );
  if (!match) return null;
  const ms = Date.parse(`${match[1]}T${match[2]}${match[3] ?? ':00'}Z`);
  return Number.isNaN(ms) ? null : ms;
}
