/**
 * What a monitor writes as it processes samples: the lines of events.log.
 *
 * @module
 */

/** Receives the events-log lines a monitor produces, in order. */
export interface EventSink {
  /** The column-name row that opens a history dump. */
  columnNames(): void;
  /** One record (timestamp and values) as a data row. */
  row(words: Uint32Array, at: number): void;
  /** A rule became active at wall time `unixMs`. */
  eventStart(rule: number, unixMs: number): void;
  /**
   * A rule became inactive at wall time `unixMs`; `peak` is its event's
   * peak as the rule keeps it (NaN when unknown).
   */
  eventEnd(rule: number, unixMs: number, peak: number): void;
  /**
   * The source lost `dropped` samples just before the next row, whose
   * sample time (Unix ms) is `unixMs`.
   */
  gap(dropped: number, unixMs: number): void;
  /**
   * The source was blind: it lost `dropped` samples after the record of
   * sample time `fromMs` (Unix ms; NaN when no record came before) and
   * before the one of `toMs`, or, with `stopped`, it was still blind when
   * the agent stopped at wall time `toMs`. Told once per loss, when the
   * monitor learns it: at the next commit while no event is active (no
   * row follows then for a {@linkcode gap} mark to precede), or as the
   * agent stops while the source is still blind. Optional: a sink that keeps no record of losses need not have it.
   */
  blindPeriod?(
    dropped: number,
    fromMs: number,
    toMs: number,
    stopped: boolean,
  ): void;
  /**
   * The peak so far of rule `rule`, whose event is still open as the log
   * closes (see {@linkcode Monitor.writeOpenPeaks}). Optional: a sink
   * that keeps no peaks need not have it.
   */
  peak?(rule: number, peak: number): void;
  /**
   * Undefined when the sink can take more; otherwise a promise that
   * resolves once it can. Only sources that can wait (replay) ask.
   */
  ready?(): Promise<void> | undefined;
}
