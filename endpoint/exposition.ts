/**
 * A writer for the Prometheus text exposition format 0.0.4 and the
 * OpenMetrics 1.0 text format, and the content negotiation between them.
 *
 * A scrape should cost the same however often it comes, so the expensive
 * parts (checking label names, escaping label values) happen once, in
 * {@linkcode formatLabels}, when the label sets are built at start-up; a
 * scrape then only checks metric names and concatenates strings.
 *
 * The two formats differ in a few places, all handled here: counter and
 * info families are named with their `_total`/`_info` suffix in Prometheus
 * format and without it in OpenMetrics; OpenMetrics has `# UNIT`, escapes
 * `"` in help text, writes histogram `le` values in its canonical float
 * form and ends with `# EOF`.
 *
 * @module
 */

/** The two text formats a scrape can get. */
export type ExpositionFormat = "prometheus" | "openmetrics";

/** The `Content-Type` of a Prometheus text format 0.0.4 exposition. */
export const PROMETHEUS_CONTENT_TYPE =
  "text/plain; version=0.0.4; charset=utf-8";

/** The `Content-Type` of an OpenMetrics 1.0 text exposition. */
export const OPENMETRICS_CONTENT_TYPE =
  "application/openmetrics-text; version=1.0.0; charset=utf-8";

/**
 * The `Content-Type` header value for an exposition in `format`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { contentTypeOf } from "./exposition.ts";
 *
 * assert.equal(contentTypeOf("prometheus"), "text/plain; version=0.0.4; charset=utf-8");
 * ```
 */
export function contentTypeOf(format: ExpositionFormat): string {
  return format === "openmetrics"
    ? OPENMETRICS_CONTENT_TYPE
    : PROMETHEUS_CONTENT_TYPE;
}

const OPENMETRICS_TYPE = "application/openmetrics-text";

// A scraper sends the same Accept header on every scrape, so remembering the
// last answer makes negotiation free after the first.
let lastAccept: string | undefined;
let lastFormat: ExpositionFormat = "prometheus";

/**
 * Picks the format from an HTTP `Accept` header: OpenMetrics when the header
 * names `application/openmetrics-text` (version 1.0.0, or no version) with a
 * q value above 0 and at least as high as that of the Prometheus format
 * (`text/plain` of any version, `text/*` or the catch-all range, the most
 * specific range deciding); Prometheus format otherwise, including for a
 * missing, empty or unreadable header. Media types and parameter names are
 * matched without regard to case, and spaces around `,`, `;` and `=` are
 * ignored.
 *
 * @example What Prometheus 2.x sends, and other headers
 * ```ts
 * import assert from "node:assert/strict";
 * import { negotiateFormat } from "./exposition.ts";
 *
 * assert.equal(
 *   negotiateFormat(
 *     "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*\/*;q=0.1",
 *   ),
 *   "openmetrics",
 * );
 * assert.equal(negotiateFormat(undefined), "prometheus");
 * assert.equal(negotiateFormat("*\/*"), "prometheus");
 * // Only OpenMetrics 1.0.0 is spoken here.
 * assert.equal(negotiateFormat("application/openmetrics-text;version=0.0.1"), "prometheus");
 * ```
 */
export function negotiateFormat(
  accept: string | null | undefined,
): ExpositionFormat {
  if (accept === null || accept === undefined || accept === "") {
    return "prometheus";
  }
  if (accept !== lastAccept) {
    lastFormat = negotiate(accept);
    lastAccept = accept;
  }
  return lastFormat;
}

function negotiate(accept: string): ExpositionFormat {
  // Per RFC 9110 the most specific matching range sets the q value; among
  // equally specific ones the highest q wins.
  let omRank = -1;
  let omQ = 0;
  let textRank = -1;
  let textQ = 0;
  for (const range of accept.split(",")) {
    const parts = range.split(";");
    const type = parts[0].trim().toLowerCase();
    if (
      type !== OPENMETRICS_TYPE && type !== "text/plain" &&
      type !== "text/*" && type !== "*/*"
    ) {
      continue;
    }
    let q = 1;
    let version: string | undefined;
    for (let i = 1; i < parts.length; i++) {
      const eq = parts[i].indexOf("=");
      if (eq < 0) continue;
      const key = parts[i].slice(0, eq).trim().toLowerCase();
      let value = parts[i].slice(eq + 1).trim();
      if (value.length >= 2 && value[0] === '"' && value.endsWith('"')) {
        value = value.slice(1, -1);
      }
      if (key === "q") {
        q = value === "" ? NaN : Number(value);
      } else if (key === "version") {
        version = value.toLowerCase();
      }
    }
    // A range with an unreadable q says nothing we can trust.
    if (!(q >= 0 && q <= 1)) continue;
    if (type === OPENMETRICS_TYPE) {
      // Other versions (the 0.0.1 draft) are not what this writer speaks.
      if (version !== undefined && version !== "1.0.0") continue;
      const rank = version === undefined ? 0 : 1;
      if (rank > omRank) {
        omRank = rank;
        omQ = q;
      } else if (rank === omRank && q > omQ) {
        omQ = q;
      }
    } else {
      // Any text/plain version will do: a 0.0.4 exposition with classic
      // names is also a valid text format 1.0.0 one.
      const rank = type === "*/*"
        ? 0
        : type === "text/*"
        ? 1
        : version === "0.0.4"
        ? 3
        : 2;
      if (rank > textRank) {
        textRank = rank;
        textQ = q;
      } else if (rank === textRank && q > textQ) {
        textQ = q;
      }
    }
  }
  return omRank >= 0 && omQ > 0 && omQ >= textQ ? "openmetrics" : "prometheus";
}

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_ESCAPES = /[\\"\n]/g;
const HAS_LABEL_ESCAPES = /[\\"\n]/;
const HELP_ESCAPES_PROMETHEUS = /[\\\n]/g;
const HAS_HELP_ESCAPES_PROMETHEUS = /[\\\n]/;

function escapeChar(c: string): string {
  return c === "\n" ? "\\n" : "\\" + c;
}

function escapeLabelValue(value: string): string {
  // Most values need no escaping; test first so they are not copied.
  return HAS_LABEL_ESCAPES.test(value)
    ? value.replace(LABEL_ESCAPES, escapeChar)
    : value;
}

function checkLabelName(name: string, action: string): void {
  if (!LABEL_NAME.test(name)) {
    throw new TypeError(
      `${action} ${
        JSON.stringify(name)
      }: label names must match [a-zA-Z_][a-zA-Z0-9_]*`,
    );
  }
  if (name.startsWith("__")) {
    throw new TypeError(
      `${action} ${
        JSON.stringify(name)
      }: label names starting with __ are reserved`,
    );
  }
}

/**
 * Renders a label set once, for use in any number of scrapes: `{a="x",b="y"}`
 * in the order given, or `""` for no labels. Values have `\`, `"` and
 * newlines escaped. Throws a TypeError for an invalid or reserved (`__`)
 * label name, or a name given twice.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatLabels } from "./exposition.ts";
 *
 * assert.equal(
 *   formatLabels([["monitor", "nic"], ["rule", 'a "b"']]),
 *   '{monitor="nic",rule="a \\"b\\""}',
 * );
 * assert.equal(formatLabels([]), "");
 * assert.throws(() => formatLabels([["__name__", "x"]]), TypeError);
 * ```
 */
export function formatLabels(
  pairs: readonly (readonly [string, string])[],
): string {
  if (pairs.length === 0) return "";
  let out = "{";
  for (let i = 0; i < pairs.length; i++) {
    const [name, value] = pairs[i];
    checkLabelName(name, "Cannot render label");
    for (let j = 0; j < i; j++) {
      if (pairs[j][0] === name) {
        throw new TypeError(
          `Cannot render label ${
            JSON.stringify(name)
          }: it appears twice in one set`,
        );
      }
    }
    if (i > 0) out += ",";
    out += `${name}="${escapeLabelValue(value)}"`;
  }
  return out + "}";
}

/** Whether `labels` is something {@linkcode formatLabels} could return. */
function isRendered(labels: string): boolean {
  return labels === "" ||
    (labels.charCodeAt(0) === 0x7b &&
      labels.charCodeAt(labels.length - 1) === 0x7d);
}

/** Whether the rendered label set `labels` has a label called `name`. */
function hasLabel(labels: string, name: string): boolean {
  // Walks name="value" pairs; a value can hold `,name="` itself, escaped,
  // so searching for the text alone would misfire.
  const end = labels.length - 1;
  let i = 1;
  while (i < end) {
    const eq = labels.indexOf("=", i);
    if (eq < 0) return false;
    if (eq - i === name.length && labels.startsWith(name, i)) return true;
    i = eq + 2;
    while (i < end && labels.charCodeAt(i) !== 0x22) {
      i += labels.charCodeAt(i) === 0x5c ? 2 : 1;
    }
    i += 2;
  }
  return false;
}

/**
 * Formats a sample value the way both formats read it: integers (below
 * 1e21 in magnitude) in plain digits, `NaN`, `+Inf` and `-Inf` spelled so,
 * anything else as JavaScript's shortest round-trip form (`0.25`, `1e-7`,
 * `1.5e+300`).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatValue } from "./exposition.ts";
 *
 * assert.equal(formatValue(42), "42");
 * assert.equal(formatValue(0.25), "0.25");
 * assert.equal(formatValue(Infinity), "+Inf");
 * ```
 */
export function formatValue(value: number): string {
  // String() already writes integers below 1e21 without exponent or ".0",
  // and every other finite number in a form both formats parse.
  if (Number.isFinite(value)) return String(value);
  return value > 0 ? "+Inf" : value < 0 ? "-Inf" : "NaN";
}

/**
 * OpenMetrics's canonical form for `le` values: Go's shortest `%g` (plain
 * digits for exponents -4 to 5, else `d.ddde+XX`) with ".0" added where
 * there is neither a point nor an exponent, e.g. "0.005", "1.0", "1e+06".
 * The spec asks for this so a bucket's label value does not change with the
 * exposer's language.
 */
function canonicalFloat(value: number): string {
  if (!Number.isFinite(value)) return formatValue(value);
  const e = value.toExponential();
  const at = e.indexOf("e");
  const exp = Number(e.slice(at + 1));
  if (exp >= -4 && exp < 6) {
    // JavaScript switches to exponents only outside 1e-7..1e21, so String()
    // is plain here.
    const plain = String(value);
    return plain.includes(".") ? plain : plain + ".0";
  }
  const digits = Math.abs(exp);
  return `${e.slice(0, at)}e${exp < 0 ? "-" : "+"}${
    digits < 10 ? "0" : ""
  }${digits}`;
}

/** The kinds of metric family the writer can write. */
export type MetricType = "counter" | "gauge" | "histogram" | "info";

/**
 * The sample names each type produces (suffixes of the family name), so
 * that two families whose samples would share a name are caught.
 */
const SUFFIXES: Readonly<Record<MetricType, readonly string[]>> = {
  counter: ["", "_total", "_created"],
  gauge: [""],
  histogram: ["", "_bucket", "_sum", "_count", "_created"],
  info: ["", "_info"],
};

/** `le` values for one bounds array, with the bounds they were made from. */
interface LeStrings {
  readonly bounds: Float64Array;
  readonly prometheus: readonly string[];
  readonly openmetrics: readonly string[];
}

// Bucket bounds are constants, so their `le` strings are made on the first
// scrape and reused; the copy of the bounds catches an array changed since.
const leCache = new WeakMap<ArrayLike<number>, LeStrings>();

function leStrings(
  family: string,
  bounds: ArrayLike<number>,
  format: ExpositionFormat,
): readonly string[] {
  const n = bounds.length;
  const cached = leCache.get(bounds);
  if (cached !== undefined && cached.bounds.length === n) {
    let i = 0;
    while (i < n && cached.bounds[i] === bounds[i]) i++;
    if (i === n) return cached[format];
  }
  const copy = new Float64Array(n);
  const prometheus: string[] = [];
  const openmetrics: string[] = [];
  for (let i = 0; i < n; i++) {
    const b = bounds[i];
    if (!Number.isFinite(b)) {
      throw new RangeError(
        `Cannot write histogram ${
          JSON.stringify(family)
        }: bound ${i} is ${b}; bounds must be finite (+Inf is added)`,
      );
    }
    if (i > 0 && !(b > copy[i - 1])) {
      throw new RangeError(
        `Cannot write histogram ${JSON.stringify(family)}: bound ${i} (${b}) ${
          b === copy[i - 1] ? "repeats" : "is below"
        } the one before; bounds must ascend`,
      );
    }
    copy[i] = b;
    prometheus.push(formatValue(b));
    openmetrics.push(canonicalFloat(b));
  }
  prometheus.push("+Inf");
  openmetrics.push("+Inf");
  const made = { bounds: copy, prometheus, openmetrics };
  if (typeof bounds === "object") leCache.set(bounds, made);
  return made[format];
}

/**
 * Accumulates one exposition: call {@linkcode ExpositionWriter.family} for
 * each metric family, then {@linkcode ExpositionWriter.sample} (or
 * {@linkcode ExpositionWriter.histogram}) for each of its series, then
 * {@linkcode ExpositionWriter.finish}. A writer is meant for one scrape.
 *
 * @example One counter in both formats
 * ```ts
 * import assert from "node:assert/strict";
 * import { ExpositionWriter, formatLabels } from "./exposition.ts";
 *
 * const nic = formatLabels([["monitor", "nic"]]); // once, at start-up
 * const write = (format: "prometheus" | "openmetrics") =>
 *   new ExpositionWriter(format)
 *     .family("dpu_traceback_samples", "counter", "Samples processed.")
 *     .sample(nic, 5)
 *     .finish();
 *
 * assert.equal(
 *   write("prometheus"),
 *   "# HELP dpu_traceback_samples_total Samples processed.\n" +
 *     "# TYPE dpu_traceback_samples_total counter\n" +
 *     'dpu_traceback_samples_total{monitor="nic"} 5\n',
 * );
 * assert.equal(
 *   write("openmetrics"),
 *   "# TYPE dpu_traceback_samples counter\n" +
 *     "# HELP dpu_traceback_samples Samples processed.\n" +
 *     'dpu_traceback_samples_total{monitor="nic"} 5\n' +
 *     "# EOF\n",
 * );
 * ```
 *
 * @example A histogram series
 * ```ts
 * import assert from "node:assert/strict";
 * import { ExpositionWriter } from "./exposition.ts";
 *
 * const text = new ExpositionWriter("openmetrics")
 *   .family("lateness_seconds", "histogram", "Poll lateness.", "seconds")
 *   .histogram("", [0.5, 1], new Float64Array([3, 1, 2]), 7.25)
 *   .finish();
 * assert.equal(
 *   text,
 *   "# TYPE lateness_seconds histogram\n" +
 *     "# UNIT lateness_seconds seconds\n" +
 *     "# HELP lateness_seconds Poll lateness.\n" +
 *     'lateness_seconds_bucket{le="0.5"} 3\n' +
 *     'lateness_seconds_bucket{le="1.0"} 4\n' +
 *     'lateness_seconds_bucket{le="+Inf"} 6\n' +
 *     "lateness_seconds_sum 7.25\n" +
 *     "lateness_seconds_count 6\n" +
 *     "# EOF\n",
 * );
 * ```
 */
export class ExpositionWriter {
  /** The format this writer writes. */
  readonly format: ExpositionFormat;
  readonly #openmetrics: boolean;
  readonly #lines: string[] = [];
  /** Each family and sample name written so far, to its family. */
  readonly #names = new Map<string, string>();
  #family = "";
  #type: MetricType | undefined;
  /** What the current family's samples are called (with `_total`, `_info`). */
  #sampleName = "";

  /** A writer for one exposition in `format`. */
  constructor(format: ExpositionFormat) {
    if (format !== "prometheus" && format !== "openmetrics") {
      throw new TypeError(
        `Cannot write an exposition in ${
          JSON.stringify(format)
        }: the formats are "prometheus" and "openmetrics"`,
      );
    }
    this.format = format;
    this.#openmetrics = format === "openmetrics";
  }

  /**
   * Starts a metric family and writes its metadata lines. `name` is the
   * family name: without `_total` for a counter, without `_info` for info.
   * `unit`, when given, must be the end of the name (`_seconds` for
   * "seconds"); it becomes a `# UNIT` line in OpenMetrics and is left out
   * of Prometheus format, which has no such line. Throws a TypeError for an
   * invalid name, a counter name ending in `_total` (an info name ending in
   * `_info`), a name already written or whose samples would clash with
   * another family's (a gauge `x_total` beside a counter `x`), a unit that
   * does not end the name, or a unit on an info family.
   */
  family(name: string, type: MetricType, help: string, unit?: string): this {
    const fail = (why: string) =>
      new TypeError(
        `Cannot write metric family ${JSON.stringify(name)}: ${why}`,
      );
    if (!METRIC_NAME.test(name)) {
      throw fail("metric names must match [a-zA-Z_:][a-zA-Z0-9_:]*");
    }
    const suffixes = Object.hasOwn(SUFFIXES, type) ? SUFFIXES[type] : [];
    if (suffixes.length === 0) {
      throw fail(
        `${
          JSON.stringify(type)
        } is not a type (counter, gauge, histogram, info)`,
      );
    }
    if (type === "counter" && name.endsWith("_total")) {
      throw fail("counter names must not end in _total");
    }
    if (type === "info" && name.endsWith("_info")) {
      throw fail("info names must not end in _info");
    }
    // Checked in both formats, so a mistake shows whichever one a test
    // happens to scrape.
    if (unit !== undefined && unit !== "") {
      if (type === "info") throw fail("info families have no unit");
      if (!name.endsWith("_" + unit)) {
        throw fail(
          `the name must end in _${unit} to carry unit ${JSON.stringify(unit)}`,
        );
      }
    }
    for (const suffix of suffixes) {
      const owner = this.#names.get(name + suffix);
      if (owner === name) throw fail("it is already written");
      if (owner !== undefined) {
        throw fail(
          `its samples would clash with family ${JSON.stringify(owner)}`,
        );
      }
    }
    for (const suffix of suffixes) this.#names.set(name + suffix, name);

    this.#family = name;
    this.#type = type;
    this.#sampleName = type === "counter"
      ? name + "_total"
      : type === "info"
      ? name + "_info"
      : name;
    const lines = this.#lines;
    if (this.#openmetrics) {
      lines.push(`# TYPE ${name} ${type}`);
      if (unit !== undefined && unit !== "") {
        lines.push(`# UNIT ${name} ${unit}`);
      }
      lines.push(`# HELP ${name} ${escapeLabelValue(help)}`);
    } else {
      // Prometheus format names counters and info by their sample names,
      // and has no info type: an info family is a gauge that is always 1.
      const typeName = type === "histogram" ? name : this.#sampleName;
      const escaped = HAS_HELP_ESCAPES_PROMETHEUS.test(help)
        ? help.replace(HELP_ESCAPES_PROMETHEUS, escapeChar)
        : help;
      lines.push(`# HELP ${typeName} ${escaped}`);
      lines.push(`# TYPE ${typeName} ${type === "info" ? "gauge" : type}`);
    }
    return this;
  }

  /**
   * Writes one sample of the current counter, gauge or info family:
   * `labels` is a set from {@linkcode formatLabels} (`""` for none). The
   * value is written as given, so NaN or a falling counter is the caller's
   * to avoid. Throws a TypeError when no family is open, the family is a
   * histogram, or `labels` is not a rendered set.
   */
  sample(labels: string, value: number): this {
    const type = this.#type;
    if (type === undefined) {
      throw new TypeError(
        "Cannot write a sample: no metric family has been started",
      );
    }
    if (type === "histogram") {
      throw new TypeError(
        `Cannot write a sample of histogram ${
          JSON.stringify(this.#family)
        }: use histogram()`,
      );
    }
    this.#checkLabels(labels);
    this.#lines.push(`${this.#sampleName}${labels} ${formatValue(value)}`);
    return this;
  }

  /**
   * Writes one series of the current histogram family: cumulative
   * `_bucket` lines for each of `bounds` (ascending, finite) and for +Inf,
   * then `_sum` and `_count`. `counts` holds the count per bucket, not
   * cumulative: `counts[i]` for values up to `bounds[i]` and above the one
   * before, and one more entry for values above the last bound. Throws a
   * TypeError when the current family is not a histogram, `labels` is not a
   * rendered set or already has `le`; a RangeError when `counts` is not one
   * longer than `bounds` or the bounds do not ascend.
   */
  histogram(
    labels: string,
    bounds: ArrayLike<number>,
    counts: ArrayLike<number>,
    sum: number,
  ): this {
    const name = this.#family;
    if (this.#type !== "histogram") {
      throw new TypeError(
        this.#type === undefined
          ? "Cannot write a histogram: no metric family has been started"
          : `Cannot write a histogram in family ${
            JSON.stringify(name)
          }: it is a ${this.#type}`,
      );
    }
    this.#checkLabels(labels);
    if (hasLabel(labels, "le")) {
      throw new TypeError(
        `Cannot write histogram ${
          JSON.stringify(name)
        }: its labels ${labels} already have le`,
      );
    }
    if (counts.length !== bounds.length + 1) {
      throw new RangeError(
        `Cannot write histogram ${
          JSON.stringify(name)
        }: ${counts.length} counts for ${bounds.length} bounds (expected ${
          bounds.length + 1
        }, the last for values above every bound)`,
      );
    }
    const les = leStrings(name, bounds, this.format);
    const prefix = labels === ""
      ? `${name}_bucket{le="`
      : `${name}_bucket${labels.slice(0, -1)},le="`;
    const lines = this.#lines;
    let total = 0;
    for (let i = 0; i < les.length; i++) {
      total += counts[i];
      lines.push(`${prefix}${les[i]}"} ${formatValue(total)}`);
    }
    lines.push(`${name}_sum${labels} ${formatValue(sum)}`);
    lines.push(`${name}_count${labels} ${formatValue(total)}`);
    return this;
  }

  /**
   * The whole exposition: every line written, each ending in "\n", and in
   * OpenMetrics the closing `# EOF` line.
   */
  finish(): string {
    const body = this.#lines.length === 0 ? "" : this.#lines.join("\n") + "\n";
    return this.#openmetrics ? body + "# EOF\n" : body;
  }

  #checkLabels(labels: string): void {
    if (!isRendered(labels)) {
      throw new TypeError(
        `Cannot write a sample of ${JSON.stringify(this.#family)}: labels ${
          JSON.stringify(labels)
        } are not a set from formatLabels()`,
      );
    }
  }
}
