/**
 * Bounded, downsampled chart data for a traceback window. A window may be
 * millions of rows; a chart needs a few hundred points. Each point is a
 * bucket of consecutive rows keeping the first and last time and the
 * lowest and highest value and rate, so a one-sample spike survives any
 * amount of downsampling.
 *
 * @module
 */

/** Numbers per point in a {@linkcode ChartSeries}. */
export const POINT_STRIDE = 6;

/**
 * Points, flattened: `[t0, t1, vMin, vMax, rMin, rMax]` per point (times
 * in ms; rates per second, NaN where unknown), oldest first.
 */
export type ChartSeries = Float64Array;

// Bucket layout while accumulating: the point, then the row count.
const B = POINT_STRIDE + 1;

function addToBucket(
  d: Float64Array,
  o: number,
  t: number,
  v: number,
  r: number,
): void {
  if (d[o + 6] === 0) {
    d[o] = t;
    d[o + 2] = v;
    d[o + 3] = v;
    d[o + 4] = r;
    d[o + 5] = r;
  } else {
    if (v < d[o + 2]) d[o + 2] = v;
    if (v > d[o + 3]) d[o + 3] = v;
    if (r === r) { // not NaN
      if (!(r >= d[o + 4])) d[o + 4] = r; // also replaces a NaN
      if (!(r <= d[o + 5])) d[o + 5] = r;
    }
  }
  d[o + 1] = t;
  d[o + 6]++;
}

function mergeBuckets(d: Float64Array, to: number, a: number, b: number) {
  if (d[b + 6] === 0) {
    if (to !== a) d.copyWithin(to, a, a + B);
    return;
  }
  const t0 = d[a];
  const vMin = Math.min(d[a + 2], d[b + 2]);
  const vMax = Math.max(d[a + 3], d[b + 3]);
  const rMin = minRate(d[a + 4], d[b + 4]);
  const rMax = maxRate(d[a + 5], d[b + 5]);
  const count = d[a + 6] + d[b + 6];
  d[to] = t0;
  d[to + 1] = d[b + 1];
  d[to + 2] = vMin;
  d[to + 3] = vMax;
  d[to + 4] = rMin;
  d[to + 5] = rMax;
  d[to + 6] = count;
}

function minRate(a: number, b: number): number {
  return a !== a ? b : b !== b ? a : Math.min(a, b);
}

function maxRate(a: number, b: number): number {
  return a !== a ? b : b !== b ? a : Math.max(a, b);
}

// Copies the non-empty buckets at `offsets` into `out` as points;
// returns the numbers written.
function copyPoints(
  d: Float64Array,
  offsets: readonly number[],
  out: Float64Array,
): number {
  let n = 0;
  for (const o of offsets) {
    if (d[o + 6] === 0) continue;
    for (let k = 0; k < POINT_STRIDE; k++) out[n++] = d[o + k];
  }
  return n;
}

/**
 * All rows from the first on, in at most `capacity` points: when the
 * points run out, neighbours merge pairwise and each point covers twice
 * as many rows. Memory is fixed at creation.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GrowingSeries, POINT_STRIDE } from "./window.ts";
 *
 * const s = new GrowingSeries(8);
 * for (let i = 0; i < 1000; i++) s.add(i, i === 500 ? 1e6 : 1, 0);
 * const points = s.points();
 * assert.ok(points.length / POINT_STRIDE <= 8);
 * const vMax = points.filter((_, k) => k % POINT_STRIDE === 3);
 * assert.equal(Math.max(...vMax), 1e6); // the one-row spike survives
 * ```
 */
export class GrowingSeries {
  readonly #capacity: number;
  readonly #data: Float64Array;
  #n = 0; // index of the bucket being filled
  #width = 1; // rows per bucket

  /** `capacity`: most points kept (even, at least 2). */
  constructor(capacity: number) {
    this.#capacity = Math.max(2, capacity + (capacity % 2));
    this.#data = new Float64Array(this.#capacity * B);
  }

  /** Adds a row at time `t` (ms) with value `v` and rate `r` (NaN: unknown). */
  add(t: number, v: number, r: number): void {
    const d = this.#data;
    if (d[this.#n * B + 6] >= this.#width) {
      if (++this.#n === this.#capacity) this.#halve();
    }
    addToBucket(d, this.#n * B, t, v, r);
  }

  /** The points so far, oldest first. */
  points(): ChartSeries {
    const offsets = [];
    for (let i = 0; i <= this.#n && i < this.#capacity; i++) {
      offsets.push(i * B);
    }
    const out = new Float64Array(offsets.length * POINT_STRIDE);
    const n = copyPoints(this.#data, offsets, out);
    return n === out.length ? out : out.slice(0, n);
  }

  /** Forgets every row, to be used again for another event. */
  reset(): void {
    this.#data.fill(0);
    this.#n = 0;
    this.#width = 1;
  }

  #halve(): void {
    const d = this.#data;
    const half = this.#capacity / 2;
    for (let i = 0; i < half; i++) {
      mergeBuckets(d, i * B, 2 * i * B, (2 * i + 1) * B);
    }
    d.fill(0, half * B);
    this.#n = half;
    this.#width *= 2;
  }
}

/**
 * The last `spanRows` rows (at least), in about `buckets` points: a ring
 * of fixed-width buckets. What a chart shows before an event starts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { POINT_STRIDE, RecentSeries } from "./window.ts";
 *
 * const s = new RecentSeries(4, 100);
 * for (let i = 0; i < 1000; i++) s.add(i, i, 1);
 * const points = s.points();
 * assert.equal(points.length / POINT_STRIDE, 5);
 * assert.equal(points[0], 875); // only the last ~100 rows remain (t0 of the first point)
 * ```
 */
export class RecentSeries {
  readonly #slots: number;
  readonly #width: number;
  readonly #data: Float64Array;
  #head = 0; // slot being filled
  #filled = 1; // slots in use, the head included

  constructor(buckets: number, spanRows: number) {
    const k = Math.max(1, Math.floor(buckets));
    this.#width = Math.max(1, Math.ceil(spanRows / k));
    this.#slots = k + 1; // k full buckets and the partial one
    this.#data = new Float64Array(this.#slots * B);
  }

  /** Adds a row at time `t` (ms) with value `v` and rate `r` (NaN: unknown). */
  add(t: number, v: number, r: number): void {
    const d = this.#data;
    if (d[this.#head * B + 6] >= this.#width) {
      this.#head = (this.#head + 1) % this.#slots;
      d.fill(0, this.#head * B, this.#head * B + B);
      if (this.#filled < this.#slots) this.#filled++;
    }
    addToBucket(d, this.#head * B, t, v, r);
  }

  /** Forgets every row (a new history dump starts). */
  clear(): void {
    this.#data.fill(0);
    this.#head = 0;
    this.#filled = 1;
  }

  /** Most numbers {@linkcode pointsInto} writes. */
  get maxLength(): number {
    return this.#slots * POINT_STRIDE;
  }

  /** The points, oldest first (a copy). */
  points(): ChartSeries {
    const out = new Float64Array(this.maxLength);
    return out.slice(0, this.pointsInto(out));
  }

  /**
   * Writes the points, oldest first, into `out` (at least
   * {@linkcode maxLength} long); returns how many numbers it wrote.
   */
  pointsInto(out: Float64Array): number {
    const offsets = [];
    for (let i = this.#filled - 1; i >= 0; i--) {
      offsets.push(((this.#head - i + this.#slots) % this.#slots) * B);
    }
    return copyPoints(this.#data, offsets, out);
  }
}
