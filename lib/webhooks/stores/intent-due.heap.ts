import type { WatchedIntent } from '../contracts/intent-watch-store.interface.js';

/** One watched intent in a `IntentDueHeap`: its place in the heap travels with it. */
export interface DueEntry {
  intent: WatchedIntent;
  /** Order of arrival: the tie-break between intents due at the same ms (first watched, first checked). */
  readonly seq: number;
  /** Index in the heap's array (-1 once removed). */
  pos: number;
}

/** A heap entry standing for the entry at `index` of another heap (the walk of `due`). */
interface FrontierEntry extends DueEntry {
  index: number;
}

const before = (a: DueEntry, b: DueEntry): boolean =>
  a.intent.nextCheckAt < b.intent.nextCheckAt || (a.intent.nextCheckAt === b.intent.nextCheckAt && a.seq < b.seq);

/**
 * A binary min-heap of watched intents by next check (then arrival), each entry knowing its index, so
 * that a reschedule or a forget costs O(log n) and reading the `limit` most overdue costs
 * O(limit log limit): the sweep of a list of a million intents never sorts it.
 */
export class IntentDueHeap<E extends DueEntry = DueEntry> {
  readonly #items: E[] = [];

  get size(): number {
    return this.#items.length;
  }

  push(entry: E): void {
    entry.pos = this.#items.length;
    this.#items.push(entry);
    this.#up(entry.pos);
  }

  remove(entry: E): void {
    const pos = entry.pos;
    if (pos < 0 || this.#items[pos] !== entry) return;
    const last = this.#items.pop()!;
    entry.pos = -1;
    if (last === entry) return;
    this.#items[pos] = last;
    last.pos = pos;
    this.#down(pos);
    this.#up(last.pos);
  }

  /** After `entry.intent.nextCheckAt` changed: moves it to its place. */
  update(entry: E): void {
    this.#down(entry.pos);
    this.#up(entry.pos);
  }

  /**
   * Up to `limit` entries due at `now`, in due order, left in place: a best-first walk from the root
   * (a child is never due before its parent), holding at most one frontier entry per one returned.
   */
  due(now: number, limit: number): E[] {
    const out: E[] = [];
    const items = this.#items;
    if (items.length === 0 || limit <= 0 || items[0]!.intent.nextCheckAt > now) return out;
    const frontier = new IntentDueHeap<FrontierEntry>();
    const visit = (index: number): void => {
      const entry = items[index];
      if (entry && entry.intent.nextCheckAt <= now)
        frontier.push({ intent: entry.intent, seq: entry.seq, pos: -1, index });
    };
    visit(0);
    while (out.length < limit && frontier.size > 0) {
      const top = frontier.#items[0]!;
      frontier.remove(top);
      out.push(items[top.index]!);
      visit(2 * top.index + 1);
      visit(2 * top.index + 2);
    }
    return out;
  }

  #up(pos: number): void {
    const items = this.#items;
    const entry = items[pos]!;
    while (pos > 0) {
      const parent = (pos - 1) >> 1;
      if (!before(entry, items[parent]!)) break;
      items[pos] = items[parent]!;
      items[pos]!.pos = pos;
      pos = parent;
    }
    items[pos] = entry;
    entry.pos = pos;
  }

  #down(pos: number): void {
    const items = this.#items;
    const entry = items[pos]!;
    const n = items.length;
    for (;;) {
      const left = 2 * pos + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && before(items[right]!, items[left]!) ? right : left;
      if (!before(items[child]!, entry)) break;
      items[pos] = items[child]!;
      items[pos]!.pos = pos;
      pos = child;
    }
    items[pos] = entry;
    entry.pos = pos;
  }
}
