/**
 * The bounds a configuration is held to beyond its shape: how large a file
 * may be, how deep it may nest, and the ranges of the numbers that reach
 * timers, allocations and the events log. Each bound is chosen so that
 * everything `check-config` accepts also runs; docs/configuration.md
 * ("Limits") lists them for operators.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { MAX_CONFIG_BYTES, MAX_NESTING } from "./limits.ts";
 *
 * assert.equal(MAX_CONFIG_BYTES, 1024 * 1024);
 * assert.ok(MAX_NESTING >= 5); // monitors[0].rules[0].name is 5 deep
 * ```
 *
 * @module
 */

import type { SourceKind } from "./types.ts";

/**
 * Largest configuration (or `--data-ids`) file read, in bytes. 1024
 * columns and 1024 rules, all with the longest names, take under 512 KiB;
 * a file past this is a mistake (a log named instead), and reading stops
 * here.
 */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * Deepest nesting of lists and objects. A configuration needs 5
 * (`monitors[0].rules[0].name`); every later step walks the document
 * recursively, so this also bounds the stack they use.
 */
export const MAX_NESTING = 32;

/** Longest key; every known key is under 32 characters. */
export const MAX_KEY_CHARS = 64;

/**
 * Longest rule or column name, in characters. 1024 column names of 4-byte
 * characters still fit the 1 MiB line the review reader accepts
 * (review/lines.ts), and names stay readable as metric labels.
 */
export const MAX_NAME_CHARS = 128;

/** Longest other text: paths and device names (Linux's PATH_MAX). */
export const MAX_TEXT_CHARS = 4096;

/** Most monitors; each has its own source, ring, log file and threads. */
export const MAX_MONITORS = 64;

/**
 * Most rules per monitor. Every rule is evaluated on every sample, 10 000
 * times a second at the default period.
 */
export const MAX_RULES = 1024;

/**
 * Longest sample period of any source, ns: one hour. Collectors wait whole
 * periods (and a GPU monitor 3 of them before it calls NVML stalled) with
 * timers, which fire at once past 2^31 - 1 ms (24.8 days).
 */
export const MAX_SAMPLE_PERIOD_NS = 3_600_000_000_000;

/**
 * The sample periods each source can deliver, ns, shortest and longest
 * (docs/configuration.md, "Limits"):
 *
 * - `doca`, 10 µs to 1 s: the agent drains the device ring every few ms
 *   and takes 100,000 samples/s at 5 % of a core (bench/RESULTS.md, "DOCA
 *   FFI path"; at 1 µs samples are lost), with headroom for rules that
 *   fire on a DPU's slower cores; the diag interface is the device's
 *   sub-second sampler (the reference app samples every 100 µs), and once
 *   a second is what the DOCA Telemetry Service already exports.
 * - `sim`, 10 µs to 1 s: it stands in for `doca`, and its scripted 20 s
 *   cycle (steady, burst, errors, quiet) needs 20 samples at least.
 * - `replay`, 1 µs to 1 h: the capture's own period; replay reads as fast
 *   as it can, and the period sizes windows and says when a monitor is
 *   stale.
 * - `nvml`, 10 ms to 1 h: NVML refreshes most readings about once a
 *   second; faster would mostly re-read its cached values.
 * - `kernel`, 1 ms to 1 h: each sample is a system call per counter file
 *   (an ioctl per interface for ethtool), and RDMA hw_counters are cached
 *   for 10 ms by the kernel (docs/spec/kernel-counters.md §3).
 */
export const SAMPLE_PERIODS: Readonly<
  Record<SourceKind, readonly [min: number, max: number]>
> = {
  doca: [10_000, 1_000_000_000],
  sim: [10_000, 1_000_000_000],
  replay: [1_000, MAX_SAMPLE_PERIOD_NS],
  nvml: [10_000_000, MAX_SAMPLE_PERIOD_NS],
  kernel: [1_000_000, MAX_SAMPLE_PERIOD_NS],
};

/** The most columns one monitor may sample (the diag interface's limit). */
export const MAX_COLUMNS = 1024;

/** Shortest metrics window, s: the aggregator needs whole nanoseconds. */
export const MIN_METRICS_WINDOW_S = 0.1;

/** Longest metrics window, s: a day; rates over longer say little. */
export const MAX_METRICS_WINDOW_S = 86_400;

/**
 * Smallest events-log size that rotates (0 turns rotation off). A header
 * block alone can be tens of KiB; a smaller size would rotate on nearly
 * every write and keep only headers.
 */
export const MIN_EVENT_LOG_MAX_BYTES = 64 * 1024;

/**
 * Most rotated events logs kept per monitor. Every rotation renames each
 * of them in turn, so a huge count would stall the writer for good.
 */
export const MAX_EVENT_LOG_KEEP = 1000;

/**
 * Memory the sample rings of all configured monitors may take together:
 * 1 GiB. A ring holds 2 x depth records of 8 bytes per column plus the
 * timestamp; allocating more fails at start on a DPU's memory.
 */
export const MAX_RING_BYTES = 1024 * 1024 * 1024;

/**
 * Longest duration a rule may give (`window`, `for`, `keep_firing_for`),
 * ns: 7 days. Rules compare time differences as float64 nanoseconds, exact
 * to 2^53 ns (104 days); a rule that waits a week to start or end is
 * already past what an operator on call would wait for.
 */
export const MAX_RULE_DURATION_NS = 7 * 86_400 * 1_000_000_000;

/**
 * Longest rule `summary`, in characters: one line an alert or a terminal
 * shows whole.
 */
export const MAX_SUMMARY_CHARS = 256;

/**
 * Longest rule `runbook_url`, in characters: it rides on every alert of
 * the rule and on its `rule_info` series, so a URL past this is a pasted
 * search result rather than a runbook's address.
 */
export const MAX_RUNBOOK_URL_CHARS = 1024;

/**
 * Longest severity, in characters: alert routing matches it as a label
 * value, so it is a short lowercase token.
 */
export const MAX_SEVERITY_CHARS = 32;

/**
 * Longest basic-auth user name, in characters: a directory account name,
 * far longer than any a site uses, short enough to show in one line.
 */
export const MAX_AUTH_USERNAME_CHARS = 256;

/**
 * Longest `--duration`, s: ten years. Leave the option out to run until
 * stopped.
 */
export const MAX_DURATION_S = 3650 * 86_400;

/**
 * Longest configuration error line, in characters. What the line quotes
 * from the file is cut shorter (a value to 120, a key to 40).
 */
export const MAX_MESSAGE_CHARS = 500;

/**
 * Most topology labels (`labels:` and the labels file together). An alert
 * carries alertname, rule, monitor, device, instance and severity besides them,
 * and Prometheus adds job and instance to the topology series: 10 keeps
 * every series under the 20 labels per series many sites enforce.
 */
export const MAX_TOPOLOGY_LABELS = 10;

/** Longest topology label value, in characters: a rack or port name. */
export const MAX_LABEL_VALUE_CHARS = 128;

/**
 * Longest `instance`, in characters: a fully qualified host name is at
 * most 253 (RFC 1035), and the host name is what it defaults to.
 */
export const MAX_INSTANCE_CHARS = 253;

/**
 * Largest labels file read, in bytes. A DPF `level_labels.ini` holds a
 * few dozen short lines; anything past this is not one.
 */
export const MAX_LABELS_FILE_BYTES = 64 * 1024;

/**
 * Most Alertmanagers. Each gets every alert from its own queue; a site's
 * Alertmanager cluster is 2 or 3 replicas.
 */
export const MAX_ALERTMANAGERS = 8;

/** Shortest push timeout, ns: less than a round trip in a data centre fails for nothing. */
export const MIN_ALERT_TIMEOUT_NS = 100_000_000;

/** Longest push timeout, ns: a push still waiting after a minute is lost anyway. */
export const MAX_ALERT_TIMEOUT_NS = 60_000_000_000;

/** Shortest resend interval, ns: faster only loads the Alertmanager. */
export const MIN_ALERT_RESEND_NS = 1_000_000_000;

/**
 * Longest resend interval, ns: an alert's lease is 4 of them, so an agent
 * that goes away resolves its alerts within 4 hours at most.
 */
export const MAX_ALERT_RESEND_NS = 3_600_000_000_000;

/** Shortest hold after an event ends, ns: 1 s, many looks of the sender. */
export const MIN_ALERT_HOLD_NS = 1_000_000_000;

/** Longest hold after an event ends, ns: a day. */
export const MAX_ALERT_HOLD_NS = 86_400_000_000_000;
