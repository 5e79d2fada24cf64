/** Median of finite numbers (undefined for none). */
export function median(values) {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Nearest-rank percentile `p` (0..100) of a Float64Array sorted in place. */
export function percentile(sortedSamples, count, p) {
  if (count === 0) return undefined;
  const rank = Math.min(count - 1, Math.max(0, Math.ceil((p / 100) * count) - 1));
  return sortedSamples[rank];
}

/** `a / b` rounded to 3 decimals, or null when either is missing. */
export function ratio(a, b) {
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return null;
  return Math.round((a / b) * 1000) / 1000;
}

/** Rounds to `digits` decimals (null stays null). */
export function round(value, digits = 2) {
  if (!Number.isFinite(value)) return null;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
