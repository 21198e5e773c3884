import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

/**
 * The entry of a worker thread, named without its extension next to `importMetaUrl`: the .ts
 * file under tsx (tests), the .js file once built.
 */
export function workerEntry(name: string, importMetaUrl: string): URL {
  return new URL(`./${name}${importMetaUrl.endsWith('.ts') ? '.ts' : '.js'}`, importMetaUrl);
}

/**
 * What a Worker runs for an entry. Built, the entry itself; from source, a module that first
 * registers tsx's loader in the thread (a worker does not inherit the parent's module hooks).
 */
export function workerScript(entry: URL): URL {
  if (!entry.pathname.endsWith('.ts')) return entry;
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api')).href;
  const source =
    `import { register } from ${JSON.stringify(tsx.replace(/\.cjs$/, '.mjs'))};\n` +
    `register();\nawait import(${JSON.stringify(entry.href)});\n`;
  return new URL(`data:text/javascript,${encodeURIComponent(source)}`);
}
