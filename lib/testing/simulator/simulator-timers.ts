/**
 * The longest delay a Node timer waits: 2^31-1 ms, about 24.8 days. A longer one is clamped to 1 ms
 * (with a TimeoutOverflowWarning), so every delay the simulator takes is bounded by it.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** Whether `ms` is a delay a Node timer honours: a number from `min` to `MAX_TIMER_MS`. */
export const isTimerMs = (ms: unknown, min = 0): ms is number =>
  typeof ms === 'number' && ms >= min && ms <= MAX_TIMER_MS;
