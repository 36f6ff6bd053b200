/**
 * Reads events.log files back into events: every monitor's files, oldest
 * first, streamed line by line (see family_reader.ts for the grammar).
 * Memory stays bounded whatever the size of the log: per event a compact
 * summary (event_store.ts) and, for the HTML report, chart data for a
 * bounded number of events (chart_budget.ts).
 *
 * @module
 */

import { type BlindPeriod, BlindPeriods } from "./blind_periods.ts";
import { Blocks } from "./blocks.ts";
import { ChartBudget } from "./chart_budget.ts";
import { ColumnNames } from "./columns.ts";
import { fileProblem, NotAnEventsLogError } from "./errors.ts";
import type { EventList } from "./event.ts";
import { EventStore, Timeline } from "./event_store.ts";
import { FamilyReader } from "./family_reader.ts";
import type { LogFamily } from "./files.ts";
import type { EventFilter } from "./filters.ts";
import type { TimeFormat } from "./reference_time.ts";

/** How to read. */
export interface ReadOptions {
  /** The timestamp encoding; undefined: detected per header block. */
  readonly timeFormat?: TimeFormat;
  /**
   * Keep chart data for the events this filter shows: the newest
   * {@linkcode maxCharts} of them. Undefined: no charts.
   */
  readonly charts?: EventFilter;
  /** Most events with charts (default 500). */
  readonly maxCharts?: number;
  /** Points per chart before the start and after it (default 150, 300). */
  readonly chartPoints?: readonly [number, number];
  /** Told the bytes read from disk as reading goes. */
  readonly onProgress?: (bytes: number) => void;
  /** Told about oddities that do not stop the review (one line each). */
  readonly onNote?: (note: string) => void;
  /**
   * With this, a file that cannot be read, is damaged or is not an events
   * log is skipped and named here, and the review goes on; without, it
   * stops the review. `partial`: it broke after some lines (a gzip cut
   * short), which were read and stay in the review. May throw to stop
   * the review.
   */
  readonly onSkip?: (path: string, reason: string, partial: boolean) => void;
}

/** What the review read from one file. */
export interface FileSummary {
  /** The file, as {@linkcode LogFamily.files} names it. */
  readonly path: string;
  /** The monitor it belongs to: from its name (`nic-events.log`), else its header's `Device`, else the name's stem. */
  readonly monitor: string;
  /** Lines read. */
  readonly lines: number;
  /** Sample rows read (history dumps and rows during events). */
  readonly rows: number;
  /** Header blocks (starts of the agent). */
  readonly blocks: number;
  /** Whether it was gzip-compressed (a rotated `.gz`). */
  readonly gzip: boolean;
  /** The timestamp encodings its header blocks use. */
  readonly timeFormats: readonly TimeFormat[];
}

/** Everything read. */
export interface ReviewLog {
  /** In timeline order, numbered from 1. */
  readonly events: EventList;
  /** The files read (not those skipped). */
  readonly files: readonly FileSummary[];
  /** Files skipped (see {@linkcode ReadOptions.onSkip}). */
  readonly skipped: number;
  /** Events to show without a chart: more than {@linkcode ReadOptions.maxCharts}. */
  readonly chartsLeftOut: number;
  /** Where the sources lost samples, each loss once, by when it ended. */
  readonly blindPeriods: readonly BlindPeriod[];
}

/**
 * Reads every family (each monitor's files, oldest first) and returns the
 * events in timeline order. Without {@linkcode ReadOptions.onSkip}, throws
 * an Error `Cannot review FILE: ...` for a file that cannot be read or is
 * not an events log.
 */
export async function readReview(
  families: readonly LogFamily[],
  options: ReadOptions = {},
): Promise<ReviewLog> {
  const store = new EventStore();
  const [beforePoints, duringPoints] = options.chartPoints ?? [150, 300];
  const charts = options.charts === undefined ? undefined : new ChartBudget(
    store,
    options.charts,
    options.maxCharts ?? 500,
    duringPoints,
  );
  const blind = new BlindPeriods();
  const shared = {
    store,
    blind,
    charts,
    beforePoints,
    columnNames: new ColumnNames(),
    blocks: new Blocks(),
    timeFormat: options.timeFormat,
    onProgress: options.onProgress,
    onNote: options.onNote,
  };
  const files: FileSummary[] = [];
  let skipped = 0;
  for (const family of families) {
    const reader = new FamilyReader(family, shared);
    for (let i = 0; i < family.files.length; i++) {
      const path = family.files[i];
      try {
        files.push({ path, ...await reader.readFile(i) });
      } catch (error) {
        const problem = fileProblem(error);
        if (problem === undefined) throw error;
        if (options.onSkip === undefined) {
          throw new Error(`Cannot review ${path}: ${problem}`, {
            cause: error,
          });
        }
        // A damaged file's first lines were read; their events stay.
        const read = reader.linesRead;
        const partial = read > 0 && !(error instanceof NotAnEventsLogError);
        options.onSkip(
          path,
          partial
            ? `${problem} after line ${read}; the lines before it are reviewed`
            : problem,
          partial,
        );
        skipped++;
        reader.skipRest(i);
      }
    }
    reader.finish();
  }
  charts?.settle();
  return {
    events: new Timeline(store),
    files,
    skipped,
    chartsLeftOut: charts?.leftOut ?? 0,
    blindPeriods: blind.sorted(),
  };
}
