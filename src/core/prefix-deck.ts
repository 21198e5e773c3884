/** Rows by destination prefix: a destination gets the row of the longest prefix it starts with. */
export class PrefixTable<T extends { prefix: string }> {
  private readonly rows = new Map<string, T>();
  private readonly longest: number;

  constructor(rows: readonly T[]) {
    for (const row of rows) this.rows.set(row.prefix, row);
    this.longest = Math.max(0, ...rows.map((r) => r.prefix.length));
  }

  get size(): number {
    return this.rows.size;
  }

  /** The row of exactly this prefix. */
  exact(prefix: string): T | null {
    return this.rows.get(prefix) ?? null;
  }

  /** The row of the longest prefix `key` starts with. */
  longestMatch(key: string): T | null {
    for (let length = Math.min(key.length, this.longest); length > 0; length--) {
      const row = this.rows.get(key.slice(0, length));
      if (row) return row;
    }
    return null;
  }
}

/** Why a row is refused; the deck's reader adds the line. */
export class DeckRowError extends Error {}

/**
 * The rows of a deck in CSV: a first line that names `columns`, then a row a line (blank
 * lines skipped). A line's cells are split on commas and trimmed; the last column takes the
 * rest of the line, so that it may hold commas, without the quotes around it if it has them.
 * `parseRow` turns the cells into a row and throws DeckRowError for a bad one; a prefix listed
 * twice is refused. Every refusal goes through `fail` with its line, which makes the error.
 */
export function readDeckCsv<T extends { prefix: string }>(
  csv: string,
  columns: readonly string[],
  parseRow: (cells: string[]) => T,
  fail: (line: number, problem: string) => Error,
): T[] {
  const lines = csv.split(/\r?\n/);
  const header = (lines[0] ?? '').split(',').map((h) => h.trim().toLowerCase());
  if (header.join(',') !== columns.join(',')) {
    throw fail(1, `the header must be ${columns.join(',')}`);
  }
  const rows: T[] = [];
  const seen = new Set<string>();
  lines.slice(1).forEach((text, k) => {
    const line = k + 2;
    if (text.trim() === '') return;
    const pieces = text.split(',');
    const cells = pieces.slice(0, columns.length - 1).map((c) => c.trim());
    cells.push(
      pieces
        .slice(columns.length - 1)
        .join(',')
        .trim()
        .replace(/^"(.*)"$/, '$1'),
    );
    let row: T;
    try {
      row = parseRow(cells);
    } catch (error) {
      if (error instanceof DeckRowError) throw fail(line, error.message);
      throw error;
    }
    if (seen.has(row.prefix)) throw fail(line, `prefix ${row.prefix} is listed twice`);
    seen.add(row.prefix);
    rows.push(row);
  });
  return rows;
}
