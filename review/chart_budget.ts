/**
 * Which events get chart data for the HTML report. Each chart holds a few
 * hundred points, so at most a fixed number of events get one: the
 * newest of the events the report will show (its filters applied, across
 * every monitor), decided while reading, in one pass: a newer event
 * takes the place of the oldest one charted. Charts stay in reused
 * buffers until reading is over ({@linkcode ChartBudget.settle}): a
 * flapping rule's events are each for a moment among the newest, and
 * memory of their own for each would be gigabytes of garbage.
 *
 * @module
 */

import type { EventState, Instant } from "./event.ts";
import type { EventStore } from "./event_store.ts";
import {
  type EventFilter,
  goesOnUntilSince,
  matchesNames,
  startsByUntil,
} from "./filters.ts";
import { type Kept, Newest } from "./newest.ts";
import { GrowingSeries, type RecentSeries } from "./window.ts";

/** The memory of a chart being gathered, used again and again. */
interface ChartBuffers {
  /** Room for the points before the start. */
  readonly before: Float64Array;
  readonly during: GrowingSeries;
}

/** The chart data of an event the report may show, while it is read. */
export class ChartDraft {
  /** The rows before the start (empty without a chart). */
  before: Float64Array = new Float64Array(0);
  /** The rows from the start on; null if the event gets no chart. */
  during: GrowingSeries | null = null;
  /** The start sample's time on the series' clock (ms). */
  readonly originMs: number;
  /** Its place among the newest, while it has one. */
  handle: Kept | undefined;
  /** Index in the store once the event is over; -1 while open. */
  stored = -1;
  /** Its buffers, while it is charted. */
  buffers: ChartBuffers | null = null;

  /** A draft for an event whose start sample is at `originMs`. */
  constructor(originMs: number) {
    this.originMs = originMs;
  }
}

/** The charts of a review: which events get one, and how many do not. */
export class ChartBudget {
  readonly #store: EventStore;
  readonly #filter: EventFilter;
  readonly #points: number;
  readonly #newest: Newest<ChartDraft>;
  readonly #pool: ChartBuffers[] = [];
  #wanted = 0;

  /**
   * Charts for the events `filter` shows, at most `max`, of
   * `duringPoints` points after the start; kept in `store`.
   */
  constructor(
    store: EventStore,
    filter: EventFilter,
    max: number,
    duringPoints: number,
  ) {
    this.#store = store;
    this.#filter = filter;
    this.#points = duringPoints;
    this.#newest = new Newest<ChartDraft>(max, (draft) => {
      // A newer event took its place.
      draft.handle = undefined;
      this.#release(draft);
    });
  }

  // The draft has no chart any more; its buffers serve the next one.
  #release(draft: ChartDraft): void {
    if (draft.buffers !== null) this.#pool.push(draft.buffers);
    draft.buffers = null;
    draft.before = new Float64Array(0);
    draft.during = null;
  }

  /**
   * At an event's start: null if the report will not show it (`--rule`,
   * `--monitor`, `--until`); else its draft, which holds chart series if
   * it is among the newest so far. `before`: the rows before the start
   * (read only then). `start` null: unknown, the oldest.
   */
  begin(
    monitor: string,
    rule: string,
    start: Instant | null,
    before: RecentSeries | null,
    originMs: number,
  ): ChartDraft | null {
    if (!matchesNames(monitor, rule, this.#filter)) return null;
    if (!startsByUntil(start, this.#filter)) return null;
    this.#wanted++;
    const draft = new ChartDraft(originMs);
    draft.handle = this.#newest.offer(start?.sec ?? NaN, start?.ns ?? 0, draft);
    if (draft.handle !== undefined) {
      let buffers = this.#pool.pop();
      if (
        buffers === undefined ||
        buffers.before.length < (before?.maxLength ?? 0)
      ) {
        buffers = {
          before: new Float64Array(before?.maxLength ?? 0),
          during: new GrowingSeries(this.#points),
        };
      } else buffers.during.reset();
      draft.buffers = buffers;
      draft.before = buffers.before.subarray(
        0,
        before?.pointsInto(buffers.before) ?? 0,
      );
      draft.during = buffers.during;
    }
    return draft;
  }

  /**
   * At an event's end: if it passes `--since`, it keeps its chart (if it
   * still has one) as event `index` of the store; if not, it is not shown
   * and frees its place.
   */
  finish(
    draft: ChartDraft,
    index: number,
    last: Instant | null,
    state: EventState,
  ): void {
    if (!goesOnUntilSince(last, state, this.#filter)) {
      this.#wanted--;
      if (draft.handle !== undefined) this.#newest.remove(draft.handle);
      draft.handle = undefined;
      this.#release(draft);
      return;
    }
    if (draft.during !== null) draft.stored = index;
  }

  /**
   * When reading is over (every event finished): the charts kept go into
   * the store, copied to their size.
   */
  settle(): void {
    for (const draft of this.#newest) {
      if (draft.stored < 0 || draft.during === null) continue;
      this.#store.setChart(draft.stored, {
        before: draft.before.slice(),
        during: draft.during.points(),
        originMs: draft.originMs,
      });
      this.#release(draft);
    }
  }

  /** Events the report shows without a chart: more than the budget. */
  get leftOut(): number {
    return this.#wanted - this.#newest.size;
  }
}
