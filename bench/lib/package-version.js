import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Version of package `name` as Node would resolve it from `fromDir` (walking up node_modules), read
 * from its package.json on disk (some packages do not export ./package.json). undefined if absent.
 */
export function packageVersion(name, fromDir) {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const file = join(dir, 'node_modules', name, 'package.json');
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')).version;
    if (dirname(dir) === dir) return undefined;
  }
}
