/**
 * Keeps the newest few of a stream of items, by a time key: how the HTML
 * report picks which events get a chart when there are more than it can
 * hold. Items arrive in any order (one monitor's files after another's);
 * an older item is turned away once the keeper is full, a newer one
 * pushes the oldest out.
 *
 * @module
 */

/** An item held, with its key: seconds, nanoseconds, and arrival order. */
interface Entry<T> extends Kept {
  readonly sec: number;
  readonly ns: number;
  readonly seq: number;
  readonly item: T;
  at: number; // position in the heap
}

/** A handle on a kept item, to take it out again. */
export interface Kept {
  readonly kept: true;
}

/**
 * At most `capacity` items, the newest by (`sec`, `ns`); of equal times
 * the later arrival counts as newer. A binary min-heap: the oldest kept
 * item is on top.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Newest } from "./newest.ts";
 *
 * const evicted: string[] = [];
 * const keep = new Newest<string>(2, (item) => evicted.push(item));
 * keep.offer(3, 0, "c");
 * keep.offer(1, 0, "a"); // kept: there is room
 * keep.offer(2, 0, "b"); // pushes "a" out
 * assert.equal(keep.offer(0, 0, "z"), undefined); // older than all: turned away
 * assert.equal(keep.size, 2);
 * assert.deepEqual(evicted, ["a"]);
 * ```
 */
export class Newest<T> {
  readonly #capacity: number;
  readonly #evicted: (item: T) => void;
  readonly #heap: Entry<T>[] = [];
  #seq = 0;

  /** `evicted` is told about each item pushed out by a newer one. */
  constructor(capacity: number, evicted: (item: T) => void) {
    this.#capacity = Math.max(0, capacity);
    this.#evicted = evicted;
  }

  /** Items kept. */
  get size(): number {
    return this.#heap.length;
  }

  /**
   * Offers an item at time `sec` + `ns` (NaN `sec`: unknown, the oldest
   * of all); a handle if it is kept, undefined if it is turned away.
   */
  offer(sec: number, ns: number, item: T): Kept | undefined {
    const entry: Entry<T> = {
      kept: true,
      sec: sec === sec ? sec : -Infinity,
      ns,
      seq: this.#seq++,
      item,
      at: -1,
    };
    const heap = this.#heap;
    if (heap.length >= this.#capacity) {
      if (heap.length === 0 || older(entry, heap[0])) return undefined;
      const oldest = heap[0];
      this.#removeAt(0);
      this.#evicted(oldest.item);
    }
    entry.at = heap.length;
    heap.push(entry);
    this.#up(entry.at);
    return entry;
  }

  /** The items kept, in no particular order. */
  *[Symbol.iterator](): Iterator<T> {
    for (const entry of this.#heap) yield entry.item;
  }

  /** Takes a kept item out (no-op if it was pushed out already). */
  remove(handle: Kept): void {
    const entry = handle as Entry<T>;
    if (entry.at >= 0 && this.#heap[entry.at] === entry) {
      this.#removeAt(entry.at);
    }
  }

  #removeAt(i: number): void {
    const heap = this.#heap;
    const gone = heap[i];
    const last = heap.pop()!;
    gone.at = -1;
    if (last === gone) return;
    heap[i] = last;
    last.at = i;
    this.#down(i);
    this.#up(last.at);
  }

  #up(i: number): void {
    const heap = this.#heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!older(heap[i], heap[parent])) break;
      this.#swap(i, parent);
      i = parent;
    }
  }

  #down(i: number): void {
    const heap = this.#heap;
    while (true) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      if (l < heap.length && older(heap[l], heap[min])) min = l;
      if (r < heap.length && older(heap[r], heap[min])) min = r;
      if (min === i) return;
      this.#swap(i, min);
      i = min;
    }
  }

  #swap(a: number, b: number): void {
    const heap = this.#heap;
    const x = heap[a];
    heap[a] = heap[b];
    heap[b] = x;
    heap[a].at = a;
    heap[b].at = b;
  }
}

function older<T>(a: Entry<T>, b: Entry<T>): boolean {
  return a.sec !== b.sec
    ? a.sec < b.sec
    : a.ns !== b.ns
    ? a.ns < b.ns
    : a.seq < b.seq;
}
