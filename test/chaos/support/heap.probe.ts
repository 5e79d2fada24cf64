import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full garbage collection, also under Jest (where `global.gc` is absent): the flag is set at run
 * time, and a fresh context exposes `gc`.
 */
function collector(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (typeof existing === 'function') return existing;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

const gc = collector();

/** `heapUsed` in bytes after two full collections (the second catches what finalizers freed). */
export function heapUsedAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

export const MB = 1024 * 1024;
