/**
 * The value of a counter or gauge in a Prometheus text exposition, its label sets added
 * together; null when the body has no sample of that name. `name` must match whole: reading
 * voxgate_process_cpu_seconds_total does not pick up voxgate_process_cpu_user_seconds_total.
 */
export function readSample(body: string, name: string): number | null {
  let total: number | null = null;
  for (const line of body.split('\n')) {
    if (!line.startsWith(name)) continue;
    const next = line.charAt(name.length);
    if (next !== ' ' && next !== '{') continue;
    const labelsEnd = next === '{' ? line.indexOf('} ', name.length) : name.length;
    if (labelsEnd === -1) continue;
    // `value` or `value timestamp` after the name and its labels.
    const value = Number(line.slice(labelsEnd + (next === '{' ? 2 : 1)).split(' ')[0]);
    if (Number.isNaN(value)) continue;
    total = (total ?? 0) + value;
  }
  return total;
}
