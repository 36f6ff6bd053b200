/**
 * The DOCA Telemetry Diag counters the agent knows by name, so that a
 * configuration can say `priority_rx_pause_packets{port=0,priority=3}`
 * where it would otherwise copy `0x1020000600000300` out of a comment.
 *
 * A data ID is 64 bits: the group in bits 63..48, the counter in 47..32,
 * and properties in the low bytes: for a port's counters, the port in byte
 * 0 and the priority in the low four bits of byte 1 (docs/spec/
 * doca-nvml-abi.md §2). The names and groups are those of NVIDIA's DOCA
 * samples; IDs outside this table are still accepted in hex.
 *
 * @module
 */

import { nearest } from "./suggest.ts";

/** Which properties a counter's data ID carries. */
export type DocaCounterScope = "device" | "port" | "priority";

/** One counter the agent knows by name. */
export interface DocaCounter {
  /** DOCA's name for it, e.g. `rx_bytes`. */
  readonly name: string;
  /** Bits 63..48 of its data ID. */
  readonly group: number;
  /** Bits 47..32 of its data ID. */
  readonly counter: number;
  /**
   * `device`: one per device, no properties; `port`: one per port;
   * `priority`: one per port and priority (0 to 7).
   */
  readonly scope: DocaCounterScope;
  /** What it counts, in a few words. */
  readonly meaning: string;
}

/** The highest port a data ID can name (byte 0). */
export const MAX_DOCA_PORT = 255;
/** The highest traffic priority (IEEE 802.1p). */
export const MAX_DOCA_PRIORITY = 7;

/**
 * Every counter the agent knows by name, by group and counter number.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { DOCA_COUNTERS } from "./doca_counters.ts";
 *
 * const pause = DOCA_COUNTERS.find((c) => c.name === "priority_rx_pause_packets");
 * assert.deepEqual([pause?.group, pause?.counter, pause?.scope], [0x1020, 6, "priority"]);
 * ```
 */
export const DOCA_COUNTERS: readonly DocaCounter[] = [
  counter("rx_bytes", 0x1020, 1, "port", "bytes received"),
  counter("priority_rx_bytes", 0x1020, 2, "priority", "bytes received"),
  counter("rx_packets", 0x1020, 3, "port", "packets received"),
  counter("priority_rx_packets", 0x1020, 4, "priority", "packets received"),
  counter(
    "rx_discard_buf_packets",
    0x1020,
    5,
    "port",
    "received packets dropped for want of receive buffers",
  ),
  counter(
    "priority_rx_pause_packets",
    0x1020,
    6,
    "priority",
    "pause frames received (the peer asks this port to stop sending)",
  ),
  counter(
    "rx_transport_ecn_packets",
    0x1080,
    4,
    "port",
    "RoCEv2 packets received marked ECN (congestion, at the notification point)",
  ),
  counter(
    "rx_transport_cnp_handled_packets",
    0x1080,
    5,
    "port",
    "congestion notification packets handled (at the reaction point)",
  ),
  counter(
    "tx_transport_cnp_sent_packets",
    0x1100,
    1,
    "port",
    "congestion notification packets sent",
  ),
  counter(
    "tx_transport_done_due_to_cc_deschedule_events",
    0x1100,
    2,
    "device",
    "transmissions descheduled by congestion control",
  ),
  counter("tx_bytes", 0x1140, 1, "port", "bytes sent (loopback excluded)"),
  counter(
    "priority_tx_bytes",
    0x1140,
    2,
    "priority",
    "bytes sent (loopback excluded)",
  ),
  counter("tx_packets", 0x1140, 3, "port", "packets sent (loopback excluded)"),
  counter(
    "priority_tx_packets",
    0x1140,
    4,
    "priority",
    "packets sent (loopback excluded)",
  ),
  counter(
    "priority_tx_pause_packets",
    0x1140,
    5,
    "priority",
    "pause frames sent (this port asks the peer to stop sending)",
  ),
  counter(
    "global_icmc_request",
    0x1180,
    1,
    "device",
    "requests to the NIC's context memory cache (ICMC)",
  ),
  counter("global_icmc_hit", 0x1180, 2, "device", "ICMC hits"),
  counter("global_icmc_miss", 0x1180, 3, "device", "ICMC misses"),
];

function counter(
  name: string,
  group: number,
  number: number,
  scope: DocaCounterScope,
  meaning: string,
): DocaCounter {
  return { name, group, counter: number, scope, meaning };
}

const BY_NAME = new Map(DOCA_COUNTERS.map((c) => [c.name, c]));
const BY_TYPE = new Map(DOCA_COUNTERS.map((c) => [typeKey(c), c]));

function typeKey(c: Pick<DocaCounter, "group" | "counter">): string {
  return hex(c.group, 4) + hex(c.counter, 4);
}

function hex(n: number, digits: number): string {
  return n.toString(16).padStart(digits, "0");
}

/** `NAME`, or `NAME{k=v,...}` with labels of digits. */
const NAMED = /^([a-z][a-z0-9_]*)(?:\{([^{}]*)\})?$/;

/** A parsed name, or why it is not one. */
export type DocaNameParse =
  | { readonly ok: true; readonly dataId: string }
  | {
    readonly ok: false;
    readonly problem: string;
    /** Whether the name is known and a label is out of range. */
    readonly range?: true;
  };

/**
 * The data ID (`0x` and 16 lowercase hex digits) a counter name stands
 * for: `NAME` for a device's counter, `NAME{port=P}` for a port's,
 * `NAME{port=P,priority=Q}` for a priority's (labels in either order).
 * Returns the problem, with the nearest known names, otherwise.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { docaDataId } from "./doca_counters.ts";
 *
 * assert.deepEqual(docaDataId("rx_bytes{port=1}"), { ok: true, dataId: "0x1020000100000001" });
 * assert.deepEqual(docaDataId("priority_rx_pause_packets{priority=3,port=0}"), {
 *   ok: true,
 *   dataId: "0x1020000600000300",
 * });
 * assert.deepEqual(docaDataId("rx_bytes"), {
 *   ok: false,
 *   problem: "must give rx_bytes's port: it is counted per port, write rx_bytes{port=N}",
 * });
 * ```
 */
export function docaDataId(text: string): DocaNameParse {
  const match = NAMED.exec(text);
  if (!match) {
    return fail(
      'must be a hex data ID such as "0x1020000100000000" or a DOCA counter name such as "rx_bytes{port=0}"',
    );
  }
  const [, name, labelText] = match;
  const known = BY_NAME.get(name);
  if (!known) {
    const near = nearest(name, [...BY_NAME.keys()], 3);
    return fail(
      `names ${name}, which is no DOCA counter the agent knows by name${
        near.length > 0 ? `; did you mean ${near.join(", ")}?` : ""
      } (others can be given as a hex data ID)`,
    );
  }
  const labels = new Map<string, number>();
  for (const pair of labelText ? labelText.split(",") : []) {
    const m = /^(port|priority)=(\d{1,3})$/.exec(pair);
    if (!m) {
      return fail(
        `must label ${name} with port=N or priority=N, got ${
          JSON.stringify(pair)
        }`,
      );
    }
    if (labels.has(m[1])) {
      return fail(`must give ${name}'s ${m[1]} once`);
    }
    labels.set(m[1], Number(m[2]));
  }
  const wanted = known.scope === "device"
    ? []
    : known.scope === "port"
    ? ["port"]
    : ["port", "priority"];
  const usage = spelling(known);
  for (const label of labels.keys()) {
    if (!wanted.includes(label)) {
      return fail(
        `must not give ${name} a ${label}${
          wanted.length > 0 ? "" : " (it is one per device)"
        }: write ${usage}`,
      );
    }
  }
  const missing = wanted.filter((l) => !labels.has(l));
  if (missing.length > 0) {
    return fail(
      `must give ${name}'s ${missing.join(" and ")}: it is counted per ${
        known.scope === "port" ? "port" : "port and priority"
      }, write ${usage}`,
    );
  }
  const port = labels.get("port") ?? 0;
  const priority = labels.get("priority") ?? 0;
  if (port > MAX_DOCA_PORT) {
    return fail(
      `must give ${name} a port from 0 to ${MAX_DOCA_PORT}, got ${port}`,
      true,
    );
  }
  if (priority > MAX_DOCA_PRIORITY) {
    return fail(
      `must give ${name} a priority from 0 to ${MAX_DOCA_PRIORITY}, got ${priority}`,
      true,
    );
  }
  return {
    ok: true,
    dataId: `0x${typeKey(known)}0000${hex(priority, 2)}${hex(port, 2)}`,
  };
}

function fail(problem: string, range = false): DocaNameParse {
  return range ? { ok: false, problem, range } : { ok: false, problem };
}

/** How a counter is written, with its labels as placeholders. */
function spelling(c: DocaCounter): string {
  return c.scope === "device"
    ? c.name
    : c.scope === "port"
    ? `${c.name}{port=N}`
    : `${c.name}{port=N,priority=N}`;
}

/**
 * The name a data ID (`0x` and 16 hex digits, as the configuration
 * normalizes it) stands for, or undefined when the agent does not know it.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { docaCounterName } from "./doca_counters.ts";
 *
 * assert.equal(docaCounterName("0x1020000600000301"), "priority_rx_pause_packets{port=1,priority=3}");
 * assert.equal(docaCounterName("0x1180000200000000"), "global_icmc_hit");
 * assert.equal(docaCounterName("0x1020000100000300"), undefined); // rx_bytes has no priority
 * assert.equal(docaCounterName("0x0000000000000001"), undefined);
 * ```
 */
export function docaCounterName(dataId: string): string | undefined {
  if (!/^0x[0-9a-fA-F]{1,16}$/.test(dataId)) return undefined;
  const digits = dataId.slice(2).toLowerCase().padStart(16, "0");
  const known = BY_TYPE.get(digits.slice(0, 8));
  if (!known || digits.slice(8, 12) !== "0000") return undefined;
  const priority = parseInt(digits.slice(12, 14), 16);
  const port = parseInt(digits.slice(14, 16), 16);
  if (known.scope === "device") {
    return priority === 0 && port === 0 ? known.name : undefined;
  }
  if (known.scope === "port") {
    return priority === 0 ? `${known.name}{port=${port}}` : undefined;
  }
  return priority <= MAX_DOCA_PRIORITY
    ? `${known.name}{port=${port},priority=${priority}}`
    : undefined;
}

/** One concrete counter of a device: its name and data ID. */
export interface DocaCounterId {
  /** e.g. `rx_bytes{port=0}`. */
  readonly name: string;
  /** `0x` and 16 lowercase hex digits. */
  readonly dataId: string;
  /** What it counts. */
  readonly meaning: string;
}

/**
 * Every counter the agent knows by name for the given ports, each priority
 * of a priority counter included: what discovery probes on a device.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { docaCounterIds } from "./doca_counters.ts";
 *
 * const ids = docaCounterIds([0]);
 * assert.equal(ids.length, 8 + 6 * 8 + 4); // port, priority and device counters
 * assert.deepEqual(ids[0], {
 *   name: "rx_bytes{port=0}",
 *   dataId: "0x1020000100000000",
 *   meaning: "bytes received",
 * });
 * ```
 */
export function docaCounterIds(ports: readonly number[]): DocaCounterId[] {
  const out: DocaCounterId[] = [];
  const add = (name: string, meaning: string) => {
    const parsed = docaDataId(name);
    if (parsed.ok) out.push({ name, dataId: parsed.dataId, meaning });
  };
  for (const port of ports) {
    for (const c of DOCA_COUNTERS) {
      if (c.scope === "port") add(`${c.name}{port=${port}}`, c.meaning);
      if (c.scope !== "priority") continue;
      for (let p = 0; p <= MAX_DOCA_PRIORITY; p++) {
        add(`${c.name}{port=${port},priority=${p}}`, c.meaning);
      }
    }
  }
  for (const c of DOCA_COUNTERS) {
    if (c.scope === "device") add(c.name, c.meaning);
  }
  return out;
}
