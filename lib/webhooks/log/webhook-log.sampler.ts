/** Options of `WebhookLogSampler`. */
export interface WebhookLogSamplerOptions {
  /** Writes one line (e.g. `logger.warn` bound to a Nest `Logger`). */
  write: (line: string) => void;
  /** Clock in ms (a `PaymentsRuntime`'s `now`). */
  now: () => number;
  /** Lines of one reason written as they come in each window. Default 10. */
  firstPerWindow?: number;
  /** Length of a window, in ms. Default 60000. */
  windowMs?: number;
  /**
   * Schedules the summary of a window that saw suppressed lines, so that the count of the last
   * burst is written even if no further line of that reason comes. Default: an unref'd
   * `setTimeout`; pass `false` to write summaries only when a later line or `flush()` comes.
   */
  schedule?: false | ((run: () => void, delayMs: number) => void);
}

interface ReasonWindow {
  startedAt: number;
  written: number;
  suppressed: number;
  scheduled: boolean;
}

const defaultSchedule = (run: () => void, delayMs: number): void => {
  setTimeout(run, delayMs).unref();
};

/**
 * Bounds the log lines that anyone on the network can cause (refused deliveries, busy redeliveries):
 * per reason, the first `firstPerWindow` lines of each window are written as they come, the rest are
 * counted, and one summary line per reason and window gives the count. A flood of N requests then
 * costs at most `firstPerWindow + 1` lines per reason per window, whatever N. Reasons are a small
 * fixed set chosen by the code (never request data), so the memory it keeps is bounded too.
 */
export class WebhookLogSampler {
  private readonly windows = new Map<string, ReasonWindow>();
  private readonly firstPerWindow: number;
  private readonly windowMs: number;
  private readonly schedule: false | ((run: () => void, delayMs: number) => void);

  constructor(private readonly options: WebhookLogSamplerOptions) {
    this.firstPerWindow = options.firstPerWindow ?? 10;
    this.windowMs = options.windowMs ?? 60_000;
    this.schedule = options.schedule ?? defaultSchedule;
  }

  /** Writes `line` now if `reason` is under its quota for the current window; else counts it. */
  log(reason: string, line: string): void {
    const now = this.options.now();
    let window = this.windows.get(reason);
    if (window && now - window.startedAt >= this.windowMs) {
      this.summarise(reason, window);
      window = undefined;
    }
    if (!window) {
      window = { startedAt: now, written: 0, suppressed: 0, scheduled: false };
      this.windows.set(reason, window);
    }
    if (window.written < this.firstPerWindow) {
      window.written += 1;
      this.options.write(line);
      return;
    }
    window.suppressed += 1;
    if (!window.scheduled && this.schedule !== false) {
      window.scheduled = true;
      const current = window;
      this.schedule(() => this.closeWindow(reason, current), Math.max(0, current.startedAt + this.windowMs - now));
    }
  }

  /** Writes the summary of every reason with suppressed lines and starts afresh. */
  flush(): void {
    for (const [reason, window] of this.windows) this.summarise(reason, window);
    this.windows.clear();
  }

  /** A window's scheduled end: summarise it unless a later line already did. */
  private closeWindow(reason: string, window: ReasonWindow): void {
    if (this.windows.get(reason) !== window) return;
    this.summarise(reason, window);
    this.windows.delete(reason);
  }

  private summarise(reason: string, window: ReasonWindow): void {
    if (window.suppressed === 0) return;
    const seconds = Math.round(this.windowMs / 1000);
    this.options.write(
      `${window.suppressed} more line(s) of reason ${reason} not written in this ${seconds} s window (the first ${this.firstPerWindow} of each window are)`,
    );
    window.suppressed = 0;
  }
}
