/**
 * One rule's alert, as a state machine over what the event journal says:
 * idle, then firing from the rule's start (resent on an interval with a
 * lease of 4 intervals, as Prometheus does), kept firing for a hold after
 * its last event ended, then resolved once. A burst that starts and ends
 * between two looks still fires it: the rule's last event changed. Pure:
 * the clock is passed in, and the caller sends what it returns.
 *
 * The first send is the one that pages, and Alertmanager does not notify
 * again when only annotations change: it waits for the event's peak, at
 * most {@linkcode PEAK_WAIT_MS} after the start or until the event ends,
 * whichever comes first, and says how long after the start the peak was
 * taken.
 *
 * Every alert is `alertname="DpuTracebackRuleFired"` with the rule's name
 * in `rule`, as the shipped Prometheus rule names the same event through
 * the scrape path, so one silence or route covers both. Its text, its
 * `generatorURL` (the event's page, by its stable ID: events/event_link.ts)
 * and its `review` command all name one event, the newest the alert
 * covers, and the text states that event's own start, never a "since":
 * Alertmanager keeps the `startsAt` of an alert already firing with the
 * same labels (one sent before an agent restart, say), which this run of
 * the agent cannot know.
 *
 * @module
 */

import type { JournalEvent } from "../events/event_journal.ts";
import { eventPagePath } from "../events/event_link.ts";
import { traceCommand } from "../events/trace_command.ts";
import {
  measureText,
  peakCell,
  type PeakKind,
  type PeakUnit,
} from "../base/peak_text.ts";
import { formatDuration } from "../base/units.ts";

/**
 * The `alertname` of every rule's alert, pushed or scraped
 * (deploy/prometheus/dpu-traceback.rules.yml): the rule is in `rule`.
 */
export const RULE_ALERTNAME = "DpuTracebackRuleFired";

/**
 * Longest the first send of an alert waits after its event's start (the
 * start marker's time) for the event's peak, ms, unless the event ends
 * first (then at once, with the exact peak). The published state the live
 * peak comes from is renewed every 100 ms: by 250 ms after the start it
 * was renewed at least once after it even if one publication slipped, and
 * the peak covers the event's first 150 to 250 ms. It is the whole cost
 * of the wait, on events that last longer (docs/fleet.md).
 */
export const PEAK_WAIT_MS = 250;

/**
 * An alert as Alertmanager's API v2 takes it (`PostableAlert`): times are
 * RFC 3339; an `endsAt` in the past resolves the alert.
 */
export interface PostableAlert {
  /** What identifies the alert: Alertmanager groups, routes and dedupes by these. */
  readonly labels: Readonly<Record<string, string>>;
  /**
   * What a person reads: `summary`, `description`, `events`, and `rule`
   * and `runbook_url` when known.
   */
  readonly annotations: Readonly<Record<string, string>>;
  /** The start sample's time of the alert's first event. */
  readonly startsAt: string;
  /** The lease while firing; the last event's end sample's time once resolved. */
  readonly endsAt: string;
  /**
   * The page of the event the text speaks of (the newest the alert
   * covers) on this agent's endpoint, by its stable ID; none when the
   * endpoint is off.
   */
  readonly generatorURL?: string;
}

/** What an alert says about its rule, fixed for the agent's run. */
export interface AlertRule {
  /** The monitor's name. */
  readonly monitor: string;
  /** The monitor's configured device (or source) for the `device` label. */
  readonly device: string;
  /** The rule's name: the alert's `rule` label. */
  readonly rule: string;
  /** The rule's severity. */
  readonly severity: string;
  /** The rule's one-line summary, if it has one. */
  readonly summary?: string;
  /** The monitor's events log, where the tracebacks are. */
  readonly eventLog: string;
  /** `min` for a rule that fires low; `max` when not given. */
  readonly peakKind?: PeakKind;
  /** The unit of what the rule measures (`/s`, `%`); none when not given. */
  readonly peakUnit?: PeakUnit;
  /**
   * The rule in words, the line check-config prints for it and review
   * states for its events (config/rule_description.ts): the `rule`
   * annotation. None when not given.
   */
  readonly description?: string;
  /**
   * What an event of the rule crossed: the measure, its window and the
   * threshold, and a signal rule's clear level, in the words of
   * config/rule_description.ts's ruleThreshold. None when not given.
   */
  readonly threshold?: string;
  /** The rule's runbook: the `runbook_url` annotation. */
  readonly runbookUrl?: string;
  /** A NIC monitor's closest GPUs, in one line: the `gpus` annotation. */
  readonly gpus?: string;
}

/** What all of an agent's alerts share. */
export interface AlertSettings {
  /** The `instance` label: the configured value or the host name. */
  readonly instance: string;
  /** Topology labels, on every alert. */
  readonly labels: Readonly<Record<string, string>>;
  /** The metrics endpoint's base URL, for `generatorURL`; none when off. */
  readonly endpointUrl?: string;
  /** How often a firing alert is sent again, ms. */
  readonly resendIntervalMs: number;
  /** How long an alert stays firing after its last event ended, ms. */
  readonly holdMs: number;
  /**
   * How long the first send may wait for the peak after the event's
   * start, ms; {@linkcode PEAK_WAIT_MS} when not given, 0 for none.
   */
  readonly peakWaitMs?: number;
}

/** What the journal and the published state say of the rule at one look. */
export interface RuleLook {
  /** The rule's open event. */
  readonly open: JournalEvent | undefined;
  /** The rule's last ended event. */
  readonly last: JournalEvent | undefined;
  /** The rule's activations so far (NaN when unknown). */
  readonly activations: number;
  /**
   * The open event's peak so far as published (metrics/open_event_peak.ts):
   * NaN when unknown, or when the publication predates the event.
   */
  readonly livePeak: number;
  /**
   * When the state {@linkcode livePeak} was read from was published, Unix
   * ms: the peak is the event's over its first `livePeakAtMs - startMs`.
   * NaN or absent when not known.
   */
  readonly livePeakAtMs?: number;
}

/**
 * One rule's alert. Call {@linkcode RuleAlert.tick} at every look (when
 * the journal changed, and by {@linkcode RuleAlert.nextDueMs}); it returns
 * the alert to send now, if any.
 *
 * @example A 2 ms burst between two looks fires, then resolves after the hold
 * ```ts
 * import assert from "node:assert/strict";
 * import { RuleAlert } from "./alert_state.ts";
 *
 * const alert = new RuleAlert(
 *   { monitor: "nic", device: "sim", rule: "drops", severity: "critical", eventLog: "events.log" },
 *   { instance: "dpu-1", labels: { rail: "3" }, resendIntervalMs: 30_000, holdMs: 300_000 },
 * );
 * const none = { open: undefined, last: undefined, activations: 0, livePeak: NaN };
 * assert.equal(alert.tick(none, 1_000), undefined);
 * const burst = {
 *   id: 1, monitor: 0, rule: 0, startNs: 1_500_000_000n, endNs: 1_502_000_000n,
 *   startSample: 10, endSample: 30, peak: 7, startMs: 1_500, endMs: 1_502, value: 5,
 *   lostBefore: 0, lossBack: -1,
 * };
 * const firing = alert.tick({ ...none, last: burst, activations: 1 }, 1_550)!;
 * assert.equal(firing.labels.alertname, "DpuTracebackRuleFired");
 * assert.equal(firing.labels.rule, "drops");
 * assert.equal(firing.labels.rail, "3");
 * assert.equal(firing.startsAt, "1970-01-01T00:00:01.500Z");
 * const resolved = alert.tick({ ...none, last: burst, activations: 1 }, 301_502)!;
 * assert.equal(resolved.endsAt, "1970-01-01T00:00:01.502Z");
 * ```
 *
 * @example An open event's first send waits for its peak, at most PEAK_WAIT_MS
 * ```ts
 * import assert from "node:assert/strict";
 * import { PEAK_WAIT_MS, RuleAlert } from "./alert_state.ts";
 *
 * const alert = new RuleAlert(
 *   { monitor: "nic", device: "sim", rule: "drops", severity: "critical", eventLog: "events.log" },
 *   { instance: "dpu-1", labels: {}, resendIntervalMs: 30_000, holdMs: 300_000 },
 * );
 * const open = {
 *   id: 1, monitor: 0, rule: 0, startNs: 1_000_000_000n, endNs: undefined,
 *   startSample: 10, endSample: undefined, peak: NaN, startMs: 1_000, endMs: NaN, value: 5,
 *   lostBefore: 0, lossBack: -1,
 * };
 * const look = { open, last: undefined, activations: 1, livePeak: 9, livePeakAtMs: 1_200 };
 * assert.equal(alert.tick(look, 1_010), undefined); // waits
 * assert.equal(alert.nextDueMs(1_010), 1_000 + PEAK_WAIT_MS);
 * const sent = alert.tick(look, 1_000 + PEAK_WAIT_MS)!;
 * assert.match(sent.annotations.description, /Peak so far 9 in its first 200 ms\./);
 * ```
 */
export class RuleAlert {
  readonly #rule: AlertRule;
  readonly #settings: AlertSettings;
  readonly #labels: Readonly<Record<string, string>>;
  readonly #peakWaitMs: number;
  /** The newest event id seen; events up to it are accounted for. */
  #seenId = 0;
  #firing = false;
  /**
   * Firing, but the first send waits for the peak of this event (its id)
   * until {@linkcode #firstDueMs}; 0 once sent.
   */
  #waitingFor = 0;
  #firstDueMs = NaN;
  #first: JournalEvent | undefined;
  #newest: JournalEvent | undefined;
  #events = 0;
  /** Activations before the alert's first event (NaN when unknown). */
  #baseActivations = NaN;
  #lastActivations = NaN;
  #sentAtMs = -Infinity;

  /** The alert of `rule`, with the agent-wide `settings`. */
  constructor(rule: AlertRule, settings: AlertSettings) {
    this.#rule = rule;
    this.#settings = settings;
    this.#peakWaitMs = Math.max(0, settings.peakWaitMs ?? PEAK_WAIT_MS);
    // Ours last: a topology label can never pass for one of them. The
    // scrape path's DpuTracebackRuleFired has the same names (and `job`
    // where this has `device`): one matcher on alertname and rule covers
    // both.
    this.#labels = {
      ...settings.labels,
      alertname: RULE_ALERTNAME,
      rule: rule.rule,
      monitor: rule.monitor,
      device: rule.device,
      instance: settings.instance,
      severity: rule.severity,
    };
  }

  /** Whether the alert is firing (including its hold). */
  get firing(): boolean {
    return this.#firing;
  }

  /** The events the current (or last) alert covers. */
  get events(): number {
    return this.#events;
  }

  /**
   * The alert to send at Unix time `nowMs` given `look`, if any. `final`
   * (the sender is stopping): a first send still waiting for the peak goes
   * out now, with what is known.
   */
  tick(
    look: RuleLook,
    nowMs: number,
    final = false,
  ): PostableAlert | undefined {
    const { open, last } = look;
    const firstLook = this.#seenId === 0 && Number.isNaN(this.#lastActivations);
    const fresh: JournalEvent[] = [];
    // Oldest first: the last ended event started before the open one. An
    // event that ended between reading the open record and the last one
    // shows in both: its ended copy says more.
    const opened = open !== undefined && open.id === last?.id
      ? undefined
      : open;
    for (const event of [last, opened]) {
      if (event !== undefined && event.id > this.#seenId) fresh.push(event);
    }
    if (fresh.length > 0) this.#seenId = fresh[fresh.length - 1].id;
    const previousActivations = this.#lastActivations;
    this.#lastActivations = look.activations;
    const resend = this.#settings.resendIntervalMs;
    if (!this.#firing) {
      // An event already over by more than the hold when first seen (an
      // agent restart finds it in the journal) is old news.
      const live = fresh.filter((e) =>
        e.endNs === undefined || nowMs - e.endMs < this.#settings.holdMs
      );
      if (live.length === 0) return undefined;
      this.#firing = true;
      this.#first = live[0];
      this.#newest = live[live.length - 1];
      this.#events = live.length;
      this.#baseActivations = firstLook || Number.isNaN(previousActivations)
        ? look.activations - live.length
        : previousActivations;
      this.#countActivations(look.activations);
      const newest = this.#newest;
      if (newest.endNs === undefined && this.#peakWaitMs > 0) {
        this.#waitingFor = newest.id;
        // From the start marker, but never longer than the wait from now:
        // a marker time ahead of this clock must not hold the page.
        this.#firstDueMs = Math.min(newest.startMs, nowMs) + this.#peakWaitMs;
      }
      return this.#sendFirst(look, nowMs, final);
    }
    // A fresh event that is the open one seen before, now ended, is no new one.
    for (const event of fresh) {
      if (event.id !== this.#newest?.id) this.#events++;
      this.#newest = event;
    }
    if (last !== undefined && last.id === this.#newest?.id) this.#newest = last;
    this.#countActivations(look.activations);
    if (this.#waitingFor !== 0) return this.#sendFirst(look, nowMs, final);
    const newest = this.#newest!;
    if (opened === undefined && newest.endNs !== undefined) {
      if (nowMs - newest.endMs >= this.#settings.holdMs) {
        this.#firing = false;
        return this.#alert(look, unixMs(newest.endNs));
      }
    }
    if (nowMs - this.#sentAtMs >= resend) {
      this.#sentAtMs = nowMs;
      return this.#alert(look, nowMs + 4 * resend);
    }
    return undefined;
  }

  // The first send, once its event's peak is known or the wait is over:
  // the event ended (the journal has its exact peak), a newer event came
  // (so the awaited one ended), or PEAK_WAIT_MS passed since its start. A
  // wait counts from the awaited event's start, so a rule flapping faster
  // than the wait cannot put the page off for ever.
  #sendFirst(
    look: RuleLook,
    nowMs: number,
    final: boolean,
  ): PostableAlert | undefined {
    const newest = this.#newest!;
    if (
      this.#waitingFor !== 0 && !final && newest.id === this.#waitingFor &&
      newest.endNs === undefined && nowMs < this.#firstDueMs
    ) {
      return undefined;
    }
    this.#waitingFor = 0;
    this.#sentAtMs = nowMs;
    return this.#alert(look, nowMs + 4 * this.#settings.resendIntervalMs);
  }

  /**
   * The earliest Unix ms at or after `nowMs` at which
   * {@linkcode RuleAlert.tick} would return an alert though the journal did
   * not change: the end of the first send's wait for the peak, the next
   * resend (which renews the lease), or the end of the hold after the last
   * event ended, whichever comes first. `nowMs` when one is already due;
   * `Infinity` when nothing is (an idle alert waits for an event). Pure: it
   * reads the state the last tick left.
   *
   * @example A firing alert is due for its resend, then for its resolution
   * ```ts
   * import assert from "node:assert/strict";
   * import { RuleAlert } from "./alert_state.ts";
   *
   * const alert = new RuleAlert(
   *   { monitor: "nic", device: "sim", rule: "drops", severity: "critical", eventLog: "events.log" },
   *   { instance: "dpu-1", labels: {}, resendIntervalMs: 30_000, holdMs: 45_000, peakWaitMs: 0 },
   * );
   * assert.equal(alert.nextDueMs(1_000), Infinity); // idle
   * const open = {
   *   id: 1, monitor: 0, rule: 0, startNs: 1_000_000_000n, endNs: undefined,
   *   startSample: 10, endSample: undefined, peak: NaN, startMs: 1_000, endMs: NaN, value: 5,
   *   lostBefore: 0, lossBack: -1,
   * };
   * alert.tick({ open, last: undefined, activations: 1, livePeak: NaN }, 1_000);
   * assert.equal(alert.nextDueMs(1_000), 31_000); // the resend
   * const ended = { ...open, endNs: 2_000_000_000n, endSample: 20, peak: 7, endMs: 2_000 };
   * alert.tick({ open: undefined, last: ended, activations: 1, livePeak: NaN }, 2_000);
   * assert.equal(alert.nextDueMs(2_000), 31_000); // resent before the hold ends
   * alert.tick({ open: undefined, last: ended, activations: 1, livePeak: NaN }, 31_000);
   * assert.equal(alert.nextDueMs(31_000), 47_000); // the hold's end
   * ```
   */
  nextDueMs(nowMs: number): number {
    if (!this.#firing) return Infinity;
    if (this.#waitingFor !== 0) {
      // NaN (a start marker's time not known) is due at once.
      return this.#firstDueMs > nowMs ? this.#firstDueMs : nowMs;
    }
    let due = this.#sentAtMs + this.#settings.resendIntervalMs;
    const newest = this.#newest;
    // An open newest event holds the alert; an end time not known (NaN)
    // never resolves it either (tick compares the same way).
    if (newest !== undefined && newest.endNs !== undefined) {
      const holdEnd = newest.endMs + this.#settings.holdMs;
      if (holdEnd < due) due = holdEnd;
    }
    return due > nowMs ? due : nowMs;
  }

  // The published activations count catches events that began and ended
  // between two looks, which the journal's per-rule records cannot show.
  #countActivations(activations: number): void {
    const counted = activations - this.#baseActivations;
    if (Number.isFinite(counted) && counted > this.#events) {
      this.#events = counted;
    }
  }

  // The text speaks of the newest event the alert covers, the one its link
  // and its review command name: what it measured at its start against
  // the threshold, and its peak (exact once it ended; while it is open,
  // over its first part, as published, saying how long that part was).
  #alert(look: RuleLook, endsAtMs: number): PostableAlert {
    const first = this.#first!;
    const newest = this.#newest!;
    const rule = this.#rule;
    const instance = this.#settings.instance;
    const open = newest.endNs === undefined;
    const unit = rule.peakUnit ?? "";
    const known = (text: string) => text === "-" ? "unknown" : text;
    const peakText = (peak: number) =>
      known(
        peakCell({ peak, peakKind: rule.peakKind ?? "max", peakUnit: unit }),
      );
    const value = known(measureText(newest.value, unit));
    const crossed = rule.threshold === undefined
      ? `Value at start ${value}.`
      : `Value at start ${value}; threshold: ${rule.threshold}.`;
    let state: string;
    let peak: string;
    if (open) {
      state = "is active now";
      const took = (look.livePeakAtMs ?? NaN) - newest.startMs;
      peak = Number.isNaN(look.livePeak)
        ? "Peak so far unknown."
        : `Peak so far ${peakText(look.livePeak)}${
          took >= 0 ? ` in its first ${formatDuration(took / 1000)}` : ""
        }.`;
    } else {
      const lasted = formatDuration(
        Number(newest.endNs! - newest.startNs) / 1e9,
      );
      state = `ended ${isoMs(newest.endNs!)} after ${lasted}`;
      peak = Number.isNaN(newest.peak)
        ? "Peak unknown."
        : `Peak ${peakText(newest.peak)} over the event.`;
    }
    const which = this.#events === 1
      ? "Its event"
      : `The newest of the ${this.#events} events this agent has counted in this alert`;
    const base = this.#settings.endpointUrl?.replace(/\/+$/, "");
    const review = traceCommand(rule.eventLog, newest.startNs, rule.rule);
    const traceback = base === undefined
      ? "Traceback of this event"
      : "Traceback of this event (the alert's link opens its page)";
    const description = `Rule ${
      JSON.stringify(rule.rule)
    } of monitor ${rule.monitor} (${rule.device}) on ${instance} fired. ${which}, started ${
      isoMs(newest.startNs)
    }, ${state}. ${crossed} ${peak}${afterLoss(newest)}${
      rule.gpus === undefined ? "" : ` ${rule.gpus}.`
    } ${traceback}: ${review}`;
    const summary = rule.summary ??
      `${rule.rule} on ${rule.monitor} (${rule.device}) of ${instance}`;
    const key = {
      monitor: rule.monitor,
      rule: rule.rule,
      startNs: newest.startNs,
    };
    return {
      labels: this.#labels,
      annotations: {
        summary,
        description,
        events: String(this.#events),
        ...(rule.description === undefined ? {} : { rule: rule.description }),
        ...(rule.runbookUrl === undefined
          ? {}
          : { runbook_url: rule.runbookUrl }),
        ...(rule.gpus === undefined ? {} : { gpus: rule.gpus }),
      },
      // Alertmanager refuses (400) an alert that ends before it starts:
      // sample times on a clock ahead of the host's by more than the
      // lease, or a source whose clock stepped back within an event.
      startsAt: new Date(Math.min(unixMs(first.startNs), endsAtMs))
        .toISOString(),
      endsAt: new Date(endsAtMs).toISOString(),
      ...(base === undefined
        ? {}
        : { generatorURL: `${base}${eventPagePath(key)}` }),
    };
  }
}

/**
 * What an on-call must know of an event that began just after the source
 * lost samples (the agent or the device stalled): the reference's types
 * compare across the loss, so the event may be the stall's doing.
 */
function afterLoss(event: JournalEvent): string {
  if (!(event.lostBefore > 0)) return "";
  const when = event.lossBack === 0
    ? "right after"
    : `${event.lossBack} samples after`;
  return ` It began ${when} the source lost ${event.lostBefore} samples (a stall): a rule of the reference's types compares across the loss, so check the traceback's <<Gap>> line before acting.`;
}

/** A timestamp in ns since the epoch as RFC 3339 with milliseconds. */
function isoMs(ns: bigint): string {
  return new Date(unixMs(ns)).toISOString();
}

/** A timestamp in ns since the epoch as Unix ms. */
function unixMs(ns: bigint): number {
  return Number(ns / 1_000_000n);
}
