/**
 * One rule's alert, as a state machine over what the event journal says:
 * idle, then firing from the rule's start (resent on an interval with a
 * lease of 4 intervals, as Prometheus does), kept firing for a hold after
 * its last event ended, then resolved once. A burst that starts and ends
 * between two looks still fires it: the rule's last event changed. Pure:
 * the clock is passed in, and the caller sends what it returns.
 *
 * @module
 */

import type { JournalEvent } from "../events/event_journal.ts";
import { traceCommand } from "../events/trace_command.ts";
import {
  measureText,
  peakCell,
  type PeakKind,
  type PeakUnit,
} from "../base/peak_text.ts";

/**
 * An alert as Alertmanager's API v2 takes it (`PostableAlert`): times are
 * RFC 3339; an `endsAt` in the past resolves the alert.
 */
export interface PostableAlert {
  /** What identifies the alert: Alertmanager groups, routes and dedupes by these. */
  readonly labels: Readonly<Record<string, string>>;
  /** What a person reads: `summary`, `description`, `events`, and `rule` when known. */
  readonly annotations: Readonly<Record<string, string>>;
  /** The start sample's time of the alert's first event. */
  readonly startsAt: string;
  /** The lease while firing; the last event's end sample's time once resolved. */
  readonly endsAt: string;
  /** The first event on this agent's metrics endpoint, when it is on. */
  readonly generatorURL?: string;
}

/** What an alert says about its rule, fixed for the agent's run. */
export interface AlertRule {
  /** The monitor's name. */
  readonly monitor: string;
  /** The monitor's configured device (or source) for the `device` label. */
  readonly device: string;
  /** The rule's name: the alert's `alertname`. */
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
 * const firing = alert.tick({ ...none, last: burst, activations: 1 }, 1_050)!;
 * assert.equal(firing.labels.alertname, "drops");
 * assert.equal(firing.labels.rail, "3");
 * assert.equal(firing.startsAt, "1970-01-01T00:00:01.500Z");
 * const resolved = alert.tick({ ...none, last: burst, activations: 1 }, 301_502)!;
 * assert.equal(resolved.endsAt, "1970-01-01T00:00:01.502Z");
 * ```
 */
export class RuleAlert {
  readonly #rule: AlertRule;
  readonly #settings: AlertSettings;
  readonly #labels: Readonly<Record<string, string>>;
  /** The newest event id seen; events up to it are accounted for. */
  #seenId = 0;
  #firing = false;
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
    // Ours last: a topology label can never pass for one of them.
    this.#labels = {
      ...settings.labels,
      alertname: rule.rule,
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

  /** The alert to send at Unix time `nowMs` given `look`, if any. */
  tick(look: RuleLook, nowMs: number): PostableAlert | undefined {
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
      this.#sentAtMs = nowMs;
      return this.#alert(look, nowMs + 4 * resend);
    }
    // A fresh event that is the open one seen before, now ended, is no new one.
    for (const event of fresh) {
      if (event.id !== this.#newest?.id) this.#events++;
      this.#newest = event;
    }
    if (last !== undefined && last.id === this.#newest?.id) this.#newest = last;
    this.#countActivations(look.activations);
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

  /**
   * The earliest Unix ms at or after `nowMs` at which
   * {@linkcode RuleAlert.tick} would return an alert though the journal did
   * not change: the next resend (which renews the lease), or the end of the
   * hold after the last event ended, whichever comes first. `nowMs` when
   * one is already due; `Infinity` when nothing is (an idle alert waits
   * for an event). Pure: it reads the state the last tick left.
   *
   * @example A firing alert is due for its resend, then for its resolution
   * ```ts
   * import assert from "node:assert/strict";
   * import { RuleAlert } from "./alert_state.ts";
   *
   * const alert = new RuleAlert(
   *   { monitor: "nic", device: "sim", rule: "drops", severity: "critical", eventLog: "events.log" },
   *   { instance: "dpu-1", labels: {}, resendIntervalMs: 30_000, holdMs: 45_000 },
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

  #alert(look: RuleLook, endsAtMs: number): PostableAlert {
    const first = this.#first!;
    const newest = this.#newest!;
    const rule = this.#rule;
    const open = newest.endNs === undefined;
    const peak = open ? look.livePeak : newest.peak;
    const unit = rule.peakUnit ?? "";
    const known = (text: string) => text === "-" ? "unknown" : text;
    const value = `value at start ${known(measureText(newest.value, unit))}`;
    const peakText = known(
      peakCell({ peak, peakKind: rule.peakKind ?? "max", peakUnit: unit }),
    );
    const review = traceCommand(rule.eventLog, newest.startNs, rule.rule);
    const times = this.#events === 1
      ? "fired once"
      : `fired ${this.#events} times`;
    const now = open
      ? `active now, ${value}, peak so far ${peakText}`
      : `last event ended ${isoMs(newest.endNs!)}, ${value}, peak ${peakText}`;
    const description =
      `Rule ${rule.rule} of monitor ${rule.monitor} (${rule.device}) on ${this.#settings.instance} ${times} since ${
        isoMs(first.startNs)
      }; ${now}.${afterLoss(newest)} Traceback in ${rule.eventLog}: ${review}`;
    const summary = rule.summary ??
      `${rule.rule} on ${rule.monitor} (${rule.device}) of ${this.#settings.instance}`;
    const base = this.#settings.endpointUrl?.replace(/\/+$/, "");
    return {
      labels: this.#labels,
      annotations: {
        summary,
        description,
        events: String(this.#events),
        ...(rule.description === undefined ? {} : { rule: rule.description }),
      },
      // Alertmanager refuses (400) an alert that ends before it starts:
      // sample times on a clock ahead of the host's by more than the
      // lease, or a source whose clock stepped back within an event.
      startsAt: new Date(Math.min(unixMs(first.startNs), endsAtMs))
        .toISOString(),
      endsAt: new Date(endsAtMs).toISOString(),
      ...(base === undefined
        ? {}
        : { generatorURL: `${base}/api/v1/events/${first.id}` }),
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
