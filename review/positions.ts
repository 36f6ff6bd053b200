/**
 * Where the rows of the history dump being read lie in the files, for
 * the start of an event's traceback window: the window starts 2 x depth
 * rows before the event (the history the reference dumps for it), or at
 * the start of the dump if it has fewer rows.
 *
 * @module
 */

/** A place in a monitor's files: file index, line number, byte offset. */
export interface FilePosition {
  readonly file: number;
  readonly line: number;
  readonly offset: number;
}

/**
 * The positions of the last `capacity` rows of the current dump (a ring:
 * fixed memory however long the dump runs), and where the dump began.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RowPositions } from "./positions.ts";
 *
 * const p = new RowPositions(2);
 * p.begin(0, 10, 500); // the column-name row
 * for (let line = 11; line <= 14; line++) p.push(0, line, 500 + line);
 * assert.equal(p.windowStart().line, 13); // the last 2 rows
 * ```
 */
export class RowPositions {
  #ring: Float64Array;
  #capacity: number;
  #rows = 0;
  #open = false;
  #file = 0;
  #line = 0;
  #offset = 0;

  /** Keeping the positions of up to `capacity` rows (at least 1). */
  constructor(capacity: number) {
    this.#capacity = Math.max(1, capacity);
    this.#ring = new Float64Array(3 * this.#capacity);
  }

  /** Rows kept at most (2 x depth); changing it forgets the rows. */
  set capacity(capacity: number) {
    const c = Math.max(1, capacity);
    if (c === this.#capacity) return;
    this.#capacity = c;
    this.#ring = new Float64Array(3 * c);
    this.#rows = 0;
  }

  /** Rows kept at most. */
  get capacity(): number {
    return this.#capacity;
  }

  /** Rows of the dump so far. */
  get rows(): number {
    return this.#rows;
  }

  /** Whether a dump (or rows without one) is being read. */
  get open(): boolean {
    return this.#open;
  }

  /** A dump starts at this line (its column-name row, or its first row). */
  begin(file: number, line: number, offset: number): void {
    this.#open = true;
    this.#rows = 0;
    this.#file = file;
    this.#line = line;
    this.#offset = offset;
  }

  /** Forgets the dump (a new configuration block starts). */
  reset(): void {
    this.#open = false;
    this.#rows = 0;
  }

  /** Where the dump began. */
  dumpStart(): FilePosition {
    return { file: this.#file, line: this.#line, offset: this.#offset };
  }

  /** A row of the dump at this place. */
  push(file: number, line: number, offset: number): void {
    const p = 3 * (this.#rows % this.#capacity);
    this.#ring[p] = file;
    this.#ring[p + 1] = line;
    this.#ring[p + 2] = offset;
    this.#rows++;
  }

  /** Rows of history an event starting now has (its start sample included). */
  historyRows(): number {
    return Math.min(this.#rows, this.#capacity);
  }

  /** Where the window of an event starting now begins. */
  windowStart(): FilePosition {
    if (this.#rows <= this.#capacity) return this.dumpStart();
    const p = 3 * (this.#rows % this.#capacity);
    return {
      file: this.#ring[p],
      line: this.#ring[p + 1],
      offset: this.#ring[p + 2],
    };
  }
}
