/**
 * Binary min-heap with a key → position index, so an item can be found, re-prioritised or removed
 * by key in O(log n). Items are ordered by `less`; the caller keeps `less` a strict weak order
 * (break ties, e.g. by an insertion sequence, if pop order among equals matters).
 *
 * Items may be mutated in place as long as `update(key)` is called right after a priority change,
 * or `rebuild()` after changing many.
 */
export class IndexedMinHeap<T> {
  private readonly items: T[] = [];
  private readonly positions = new Map<string, number>();

  constructor(
    private readonly less: (a: T, b: T) => boolean,
    private readonly keyOf: (item: T) => string,
  ) {}

  get size(): number {
    return this.items.length;
  }

  has(key: string): boolean {
    return this.positions.has(key);
  }

  get(key: string): T | undefined {
    const i = this.positions.get(key);
    return i === undefined ? undefined : this.items[i];
  }

  peek(): T | undefined {
    return this.items[0];
  }

  /** Inserts the item, or replaces the item with the same key (and re-sifts it). */
  set(item: T): void {
    const key = this.keyOf(item);
    const i = this.positions.get(key);
    if (i === undefined) {
      this.items.push(item);
      this.positions.set(key, this.items.length - 1);
      this.siftUp(this.items.length - 1);
    } else {
      this.items[i] = item;
      this.resift(i);
    }
  }

  /** Restores order after the priority of the item under `key` changed in place. */
  update(key: string): void {
    const i = this.positions.get(key);
    if (i !== undefined) this.resift(i);
  }

  delete(key: string): T | undefined {
    const i = this.positions.get(key);
    if (i === undefined) return undefined;
    return this.removeAt(i);
  }

  pop(): T | undefined {
    return this.items.length === 0 ? undefined : this.removeAt(0);
  }

  /** Re-establishes heap order in O(n) after many priorities changed in place. */
  rebuild(): void {
    for (let i = (this.items.length >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  /**
   * Every item for which `pred` holds, in no particular order, without removing them. `pred` must be
   * monotone along heap order (true for an item implies true for everything less than it, as in
   * "priority <= x"), so whole subtrees are skipped: O(k) for k matches.
   */
  collectWhile(pred: (item: T) => boolean): T[] {
    const out: T[] = [];
    const stack: number[] = this.items.length > 0 ? [0] : [];
    while (stack.length > 0) {
      const i = stack.pop() as number;
      const item = this.items[i] as T;
      if (!pred(item)) continue;
      out.push(item);
      const left = 2 * i + 1;
      if (left < this.items.length) stack.push(left);
      if (left + 1 < this.items.length) stack.push(left + 1);
    }
    return out;
  }

  /** Items in heap (not sorted) order; a snapshot, safe to iterate while mutating the heap. */
  values(): T[] {
    return this.items.slice();
  }

  private removeAt(i: number): T {
    const items = this.items;
    const removed = items[i] as T;
    const last = items.pop() as T;
    this.positions.delete(this.keyOf(removed));
    if (i < items.length) {
      items[i] = last;
      this.positions.set(this.keyOf(last), i);
      this.resift(i);
    }
    return removed;
  }

  private resift(i: number): void {
    if (!this.siftUp(i)) this.siftDown(i);
  }

  /** Returns true if the item moved. */
  private siftUp(start: number): boolean {
    const items = this.items;
    const item = items[start] as T;
    let i = start;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = items[parent] as T;
      if (!this.less(item, p)) break;
      items[i] = p;
      this.positions.set(this.keyOf(p), i);
      i = parent;
    }
    if (i !== start) {
      items[i] = item;
      this.positions.set(this.keyOf(item), i);
    }
    return i !== start;
  }

  private siftDown(start: number): void {
    const items = this.items;
    const n = items.length;
    const item = items[start] as T;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      let child = left;
      if (right < n && this.less(items[right] as T, items[left] as T)) child = right;
      const c = items[child] as T;
      if (!this.less(c, item)) break;
      items[i] = c;
      this.positions.set(this.keyOf(c), i);
      i = child;
    }
    items[i] = item;
    this.positions.set(this.keyOf(item), i);
  }
}
