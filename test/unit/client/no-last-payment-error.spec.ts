import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';

const root = new URL('../../../', import.meta.url).pathname;

function filesUnder(dir: string): string[] {
  let out: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const entry of entries) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) out = out.concat(filesUnder(full));
    else out.push(full);
  }
  return out;
}

describe('[R1] last_payment_error is never read', () => {
  it('[R1] no file in lib/ or sample/ mentions last_payment_error', () => {
    const files = [...filesUnder(join(root, 'lib')), ...filesUnder(join(root, 'sample'))];
    expect(files.length).toBeGreaterThan(10);
    const offenders = files.filter((file) => readFileSync(file, 'utf8').includes('last_payment_error'));
    expect(offenders).toEqual([]);
  });
});
