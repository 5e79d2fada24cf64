/** Polls `check` until it passes (or `timeoutMs` passes, then throws its last failure): no sleeping on wall-clock time. */
export async function eventually(check: () => unknown, timeoutMs = 20_000, everyMs = 25): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  }
}
