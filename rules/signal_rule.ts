/**
 * A rule in the operator's terms, exactly as `docs/spec/signal-rules.md` defines
 * it: a signal (`value`, `increase`, `rate` or `ratio` over a window) above
 * or below a threshold, with a clear level, `for` or M of N to start and
 * `keep_firing_for` to end.
 *
 * Per sample the rule does a constant amount of work, amortized: the
 * window's start moves forward with a pointer and the sums over the window
 * are kept, not recomputed. Nothing allocates and nothing uses BigInt;
 * u64 values and timestamps are compared and subtracted on their 32-bit
 * halves.
 *
 * @module
 */

import {
  DEFAULT_SEVERITY,
  type SignalKind,
  type SignalRuleConfig,
} from "../config/types.ts";
import { bigintToU64, gtU64, ltU64, toNumberU64 } from "../base/u64.ts";
import type { MonitorRule } from "./monitor_rule.ts";
import type { SampleRing } from "./ring.ts";

const VALUE = 0;
const INCREASE = 1;
const RATE = 2;
const RATIO = 3;

const KINDS: Readonly<Record<SignalKind, number>> = {
  value: VALUE,
  increase: INCREASE,
  rate: RATE,
  ratio: RATIO,
};

const TWO_32 = 4294967296;
// An increase of 2^63 or more is a counter reset (docs/spec/signal-rules.md §1).
const RESET_HI = 0x80000000;

// Per-sample state that is not a small integer lives in typed arrays: a
// double stored in an object field, or passed to a call V8 does not
// inline, is boxed on the heap, and the per-sample path must not allocate.
// Slots of the Uint32Array (u64 values and timestamps as halves):
const J_LO = 0; // the window start j's value (numerator column)
const JB_LO = 2; // j's value of the denominator column (ratio)
const RS_LO = 4; // rs: when the current raise run began
const CS_LO = 6; // cs: when the current clear run began
const LAST_LO = 8; // the previous sample's timestamp
const WORDS = 10;
// Slots of the Float64Array: the window's sums of increases after j up to
// the newest sample (resets as 0), each a low word in [0, 2^32) and a high
// part, so a sum stays exact; then the event's peak.
const SUM = 0;
const SUM_B = 2;
const PEAK = 4;
const FLOATS = 5;

/**
 * Adds (`sign` 1) or takes away (-1) the increase from the u64 at
 * `b[bi]` to the u64 at `a[ai]` to the sum at `sums[slot]`; a reset (an
 * increase of 2^63 or more) counts as 0, and the call returns false.
 * Arguments are arrays and small integers only, so a call that is not
 * inlined allocates nothing. The only place a counter's increase (mod
 * 2^64, so a wrap counts) is taken: an `increase` signal adds it to a
 * zeroed {@linkcode increase}.
 */
function addIncrease(
  sums: Float64Array,
  slot: number,
  a: Uint32Array,
  ai: number,
  b: Uint32Array,
  bi: number,
  sign: number,
): boolean {
  let lo = a[ai] - b[bi];
  let hi = a[ai + 1] - b[bi + 1];
  if (lo < 0) {
    lo += TWO_32;
    hi -= 1;
  }
  if (hi < 0) hi += TWO_32;
  if (hi >= RESET_HI) return false;
  let sumLo = sums[slot] + sign * lo;
  let sumHi = sums[slot + 1] + sign * hi;
  if (sumLo >= TWO_32) {
    sumLo -= TWO_32;
    sumHi += 1;
  } else if (sumLo < 0) {
    sumLo += TWO_32;
    sumHi -= 1;
  }
  sums[slot] = sumLo;
  sums[slot + 1] = sumHi;
  return true;
}

/**
 * An `increase` signal's sum (lo, hi), of one increase: one for the
 * module, read right after its {@linkcode addIncrease}. A helper of its
 * own returning the two halves made the window slide, which calls
 * addIncrease four times, too big for V8 to inline: 9 % slower.
 */
const increase = new Float64Array(2);

/**
 * One signal rule's state machine. {@linkcode SignalRule.evaluate} runs
 * once per sample, after the sample is in the ring, and reports whether
 * the rule started or ended on it.
 *
 * Timestamps are expected never to go backwards. If one does (a capture
 * edited by hand, a clock stepped back), the rule restarts its window and
 * its runs at that sample, so the signal is unknown for one window and
 * `for` and `keep_firing_for` count from there; its state (active or not)
 * is kept.
 *
 * @example The worked example of docs/spec/signal-rules.md §7
 * ```ts
 * import assert from "node:assert/strict";
 * import { SignalRule } from "./signal_rule.ts";
 * import { SampleRing } from "./ring.ts";
 *
 * const rule = new SignalRule({
 *   name: "ECN storm", signal: "rate", column: 0, windowNs: 1_000_000,
 *   direction: "above", threshold: 1_000_000, clear: 200_000,
 *   forNs: 500_000, keepFiringForNs: 2_000_000,
 * }, 64);
 * const ring = new SampleRing(1, 128);
 * let ecn = 0;
 * const changes: number[] = [];
 * for (let i = 0; i < 80; i++) {
 *   if (i > 0) ecn += i < 10 ? 10 : i < 30 ? 200 : 10;
 *   const at = ring.claim();
 *   ring.words[at] = i * 100_000; // timestamp (ns), low half
 *   ring.words[at + 2] = ecn; // column 0, low half
 *   if (rule.evaluate(ring)) changes.push(i);
 * }
 * assert.deepEqual(changes, [19, 59]); // starts at sample 19, ends at 59
 * assert.equal(rule.peak, 2_000_000);
 * assert.equal(rule.activations, 1);
 * ```
 */
export class SignalRule implements MonitorRule {
  /** Rule name as configured. */
  readonly name: string;
  /** The column the signal reads (for `ratio`, the numerator). */
  readonly column: number;
  /** For `ratio`, the column that divides; -1 otherwise. */
  readonly denominator: number;
  /** What the rule computes each sample. */
  readonly signal: SignalKind;
  /** Whether the rule fires high (`above`) or low (`below`). */
  readonly direction: "above" | "below";
  /** How urgent the rule's events are. */
  readonly severity: string;
  /** The configured one-line summary, or undefined. */
  readonly summary: string | undefined;
  /** Times the rule has become active since start. */
  activations = 0;

  readonly #kind: number;
  readonly #above: boolean;
  // Word offsets of the columns inside a record.
  readonly #word: number;
  readonly #wordB: number;
  // Thresholds: exact halves for value and increase, floats for rate and ratio.
  readonly #tLo: number;
  readonly #tHi: number;
  readonly #cLo: number;
  readonly #cHi: number;
  readonly #t: number;
  readonly #c: number;
  readonly #windowNs: number;
  readonly #forNs: number;
  readonly #keepNs: number;
  // M of N: the last N raise flags, a cursor into them and their sum.
  readonly #m: number;
  readonly #n: number;
  readonly #raised: Uint8Array;
  #raisedAt = 0;
  #raisedCount = 0;

  #active = false;
  // The current raise and clear runs (their starts are in #u).
  #raising = false;
  #clearing = false;
  // Whether the rule has seen a sample; the first starts the window.
  #started = false;
  // How many samples back from the newest the window's start j is.
  #jBack = 0;
  readonly #u = new Uint32Array(WORDS);
  readonly #f = new Float64Array(FLOATS);

  /**
   * Builds the rule for a monitor of the given history depth (the ring
   * holds 2 x depth samples). The configuration is checked when loaded;
   * what would break the state machine itself is checked again here.
   */
  constructor(config: SignalRuleConfig, depth: number) {
    const where = `Cannot create rule "${config.name}"`;
    this.name = config.name;
    this.column = config.column;
    this.signal = config.signal;
    this.direction = config.direction;
    this.severity = config.severity ?? DEFAULT_SEVERITY;
    this.summary = config.summary;
    this.#kind = Object.hasOwn(KINDS, config.signal)
      ? KINDS[config.signal]
      : -1;
    if (this.#kind === -1) {
      throw new TypeError(`${where}: unknown signal "${config.signal}"`);
    }
    this.#above = config.direction === "above";
    this.#word = 2 + 2 * config.column;
    const ratio = this.#kind === RATIO;
    if (ratio && config.denominator === undefined) {
      throw new TypeError(`${where}: a ratio needs a denominator column`);
    }
    this.denominator = ratio ? config.denominator! : -1;
    this.#wordB = ratio ? 2 + 2 * config.denominator! : this.#word;
    const exact = this.#kind === VALUE || this.#kind === INCREASE;
    if (exact !== (typeof config.threshold === "bigint")) {
      throw new TypeError(
        `${where}: a ${config.signal} threshold must be a ${
          exact ? "bigint (exact u64)" : "number"
        }`,
      );
    }
    if (typeof config.threshold !== typeof config.clear) {
      throw new TypeError(
        `${where}: the clear level must be of the threshold's type`,
      );
    }
    const halves = new Uint32Array(2);
    if (exact) {
      bigintToU64(config.threshold as bigint, halves, 0);
      this.#tLo = halves[0];
      this.#tHi = halves[1];
      bigintToU64(config.clear as bigint, halves, 0);
      this.#cLo = halves[0];
      this.#cHi = halves[1];
      this.#t = toNumberU64(this.#tLo, this.#tHi);
      this.#c = toNumberU64(this.#cLo, this.#cHi);
    } else {
      this.#t = config.threshold as number;
      this.#c = config.clear as number;
      this.#tLo =
        this.#tHi =
        this.#cLo =
        this.#cHi =
          0;
    }
    const wrongSide = this.#above ? this.#c > this.#t : this.#c < this.#t;
    if (wrongSide || Number.isNaN(this.#t) || Number.isNaN(this.#c)) {
      throw new RangeError(
        `${where}: the clear level ${this.#c} must be ${
          this.#above ? "at or below" : "at or above"
        } the threshold ${this.#t}`,
      );
    }
    this.#windowNs = config.windowNs;
    const windowed = this.#kind === RATE || this.#kind === RATIO;
    if (windowed && !(config.windowNs > 0)) {
      throw new RangeError(`${where}: a ${config.signal} needs a window > 0`);
    }
    this.#forNs = config.forNs;
    this.#keepNs = config.keepFiringForNs;
    const mOfN = config.mOfN;
    this.#m = mOfN?.m ?? 0;
    this.#n = mOfN?.n ?? 0;
    if (
      mOfN !== undefined &&
      !(Number.isInteger(mOfN.m) && Number.isInteger(mOfN.n) &&
        1 <= mOfN.m && mOfN.m <= mOfN.n && mOfN.n <= 2 * depth)
    ) {
      throw new RangeError(
        `${where}: M of N needs 1 <= M <= N <= 2 x depth (${
          2 * depth
        }), got ${mOfN.m} of ${mOfN.n}`,
      );
    }
    this.#raised = new Uint8Array(this.#n);
    this.#f[PEAK] = NaN;
  }

  /** Whether the rule is in an event. */
  get active(): boolean {
    return this.#active;
  }

  /**
   * Whether the raise condition holds on the newest sample and the rule
   * has not started (its `for` or M of N not yet met).
   */
  get pending(): boolean {
    return !this.#active && this.#raising;
  }

  /**
   * The signal's maximum (`above`) or minimum (`below`) over the known
   * samples of the current or last event, start and end included. NaN
   * before the first event or if the event has had no known sample.
   */
  get peak(): number {
    return this.#f[PEAK];
  }

  /**
   * Evaluates the newest record of `ring`. Returns true when the rule
   * started or ended on this sample (check {@linkcode active}).
   */
  evaluate(ring: SampleRing): boolean {
    const words = ring.words;
    const at = ring.offsetBack(0);
    const u = this.#u;
    const f = this.#f;
    const tLo = words[at];
    const tHi = words[at + 1];
    // Time differences are taken on the halves, then made one float:
    // exact below 2^53 ns (104 days), negative when time went backwards.
    // A sample earlier than the one before restarts windows and runs.
    const restart = this.#started &&
      (ring.count < 2 ||
        (tHi - u[LAST_LO + 1]) * TWO_32 + (tLo - u[LAST_LO]) < 0);
    u[LAST_LO] = tLo;
    u[LAST_LO + 1] = tHi;

    // The signal: known or not, as halves (value, increase) and a float.
    let known = false;
    let xLo = 0;
    let xHi = 0;
    let x = 0;
    const kind = this.#kind;
    const w = this.#word;
    if (kind === VALUE) {
      known = true;
      xLo = words[at + w];
      xHi = words[at + w + 1];
    } else if (kind === INCREASE) {
      // Across lost samples the two records are not neighbours (§2).
      if (ring.count >= 2 && ring.lossBack !== 0) {
        const prev = ring.offsetBack(1);
        increase[0] = increase[1] = 0;
        if (addIncrease(increase, 0, words, at + w, words, prev + w, 1)) {
          known = true;
          xLo = increase[0];
          xHi = increase[1];
        }
      }
    } else if (
      this.#slideWindow(ring, at, restart) && this.#jBack <= ring.lossBack
    ) {
      // Known once the window no longer spans a loss (§2): its sums still
      // follow every record, so they are right again from then on.
      known = true;
      if (kind === RATE) {
        const j = ring.offsetBack(this.#jBack);
        const dt = (tHi - words[j + 1]) * TWO_32 + (tLo - words[j]);
        x = toNumberU64(f[SUM], f[SUM + 1]) * 1e9 / dt;
      } else {
        const below = toNumberU64(f[SUM_B], f[SUM_B + 1]);
        if (below === 0) known = false;
        else x = toNumberU64(f[SUM], f[SUM + 1]) / below;
      }
    }
    this.#started = true;

    // Raise and clear on this sample.
    let raise = false;
    let clear = false;
    if (known) {
      if (kind <= INCREASE) {
        x = toNumberU64(xLo, xHi);
        if (this.#above) {
          raise = gtU64(xLo, xHi, this.#tLo, this.#tHi);
          clear = !gtU64(xLo, xHi, this.#cLo, this.#cHi);
        } else {
          raise = ltU64(xLo, xHi, this.#tLo, this.#tHi);
          clear = !ltU64(xLo, xHi, this.#cLo, this.#cHi);
        }
      } else if (this.#above) {
        raise = x > this.#t;
        clear = x <= this.#c;
      } else {
        raise = x < this.#t;
        clear = x >= this.#c;
      }
    }

    // M of N: the raise flags of the last N samples, and the clear rule
    // that keeps the rule from ending while its own start still holds.
    const n = this.#n;
    if (n > 0) {
      const slot = this.#raisedAt;
      this.#raisedCount += (raise ? 1 : 0) - this.#raised[slot];
      this.#raised[slot] = raise ? 1 : 0;
      this.#raisedAt = slot + 1 === n ? 0 : slot + 1;
      if (this.#raisedCount >= this.#m) clear = false;
    }

    // Runs: when the current raise and clear runs began.
    if (!raise) this.#raising = false;
    else if (!this.#raising || restart) {
      this.#raising = true;
      u[RS_LO] = tLo;
      u[RS_LO + 1] = tHi;
    }
    if (!clear) this.#clearing = false;
    else if (!this.#clearing || restart) {
      this.#clearing = true;
      u[CS_LO] = tLo;
      u[CS_LO + 1] = tHi;
    }

    if (!this.#active) {
      const start = n > 0 ? this.#raisedCount >= this.#m : raise &&
        (tHi - u[RS_LO + 1]) * TWO_32 + (tLo - u[RS_LO]) >= this.#forNs;
      if (!start) return false;
      this.#active = true;
      this.activations++;
      // The signal is known here: `for` starts on a raising sample, and M
      // of N reaches M only on one (an inactive rule had fewer than M the
      // sample before). A conditional NaN would box x in optimized code.
      f[PEAK] = x;
      return true;
    }
    if (known) {
      const peak = f[PEAK];
      // NaN (no known sample yet) compares false either way: replace it.
      if (this.#above ? !(x <= peak) : !(x >= peak)) f[PEAK] = x;
    }
    if (
      clear &&
      (tHi - u[CS_LO + 1]) * TWO_32 + (tLo - u[CS_LO]) >= this.#keepNs
    ) {
      this.#active = false;
      return true;
    }
    return false;
  }

  /**
   * Moves the window's start j up to the newest sample still in the ring
   * whose timestamp is at least the window before the newest's (the
   * record at `at`), keeping the sums of the increases after it. Returns
   * whether there is such a j. Takes small integers only (see #u).
   */
  #slideWindow(ring: SampleRing, at: number, restart: boolean): boolean {
    const words = ring.words;
    const u = this.#u;
    const f = this.#f;
    const w = this.#word;
    const wb = this.#wordB;
    const ratio = this.#kind === RATIO;
    if (!this.#started || restart) {
      this.#jBack = 0;
      u[J_LO] = words[at + w];
      u[J_LO + 1] = words[at + w + 1];
      u[JB_LO] = words[at + wb];
      u[JB_LO + 1] = words[at + wb + 1];
      f[SUM] =
        f[SUM + 1] =
        f[SUM_B] =
        f[SUM_B + 1] =
          0;
      return false;
    }
    // The newest increase joins the sums (the previous sample is in the
    // ring, or this would be a restart); j is one sample further back.
    const prev = ring.offsetBack(1);
    addIncrease(f, SUM, words, at + w, words, prev + w, 1);
    if (ratio) addIncrease(f, SUM_B, words, at + wb, words, prev + wb, 1);
    let back = this.#jBack + 1;
    // j must stay in the ring, whose oldest record is count - 1 back.
    const oldest = ring.count - 1;
    const tLo = words[at];
    const tHi = words[at + 1];
    const windowNs = this.#windowNs;
    while (back > 0) {
      const next = ring.offsetBack(back - 1);
      if (
        back <= oldest &&
        (tHi - words[next + 1]) * TWO_32 + (tLo - words[next]) < windowNs
      ) break;
      // j moves to the next sample: its increase leaves the sums.
      addIncrease(f, SUM, words, next + w, u, J_LO, -1);
      u[J_LO] = words[next + w];
      u[J_LO + 1] = words[next + w + 1];
      if (ratio) {
        addIncrease(f, SUM_B, words, next + wb, u, JB_LO, -1);
        u[JB_LO] = words[next + wb];
        u[JB_LO + 1] = words[next + wb + 1];
      }
      back--;
    }
    this.#jBack = back;
    if (back > oldest) return false;
    const j = ring.offsetBack(back);
    return (tHi - words[j + 1]) * TWO_32 + (tLo - words[j]) >= windowNs;
  }
}
