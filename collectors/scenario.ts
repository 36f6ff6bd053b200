/**
 * The simulator's script: what the simulated NIC is doing at each moment of
 * a 20 s cycle of sample time, as expected rates per second before noise.
 *
 * The cycle exercises every rule type of the demo configuration
 * (`deploy/demo.yaml`): steady RoCE traffic, a congestion burst (ECN marks,
 * CNPs, PFC pauses, slow PCIe reads), an error spike (receive-buffer
 * discards), a quiet spell (traffic nearly stops, PCIe idle), then steady
 * traffic again.
 *
 * | from (ms) | to (ms) | phase    |
 * | --------- | ------- | -------- |
 * | 0         | 5000    | steady   |
 * | 5000      | 9000    | burst    |
 * | 9000      | 10000   | steady   |
 * | 10000     | 12000   | errors   |
 * | 12000     | 13000   | steady   |
 * | 13000     | 16000   | quiet    |
 * | 16000     | 20000   | steady   |
 *
 * It is a pure function of the time into the cycle, so the simulator's output
 * depends only on the sample index, the period and the seed, never on how
 * samples are batched.
 *
 * @module
 */

/** Length of one scenario cycle, in milliseconds of sample time. */
export const CYCLE_MS = 20_000;

/** The phases of the cycle, in order. */
export type Phase = "steady" | "burst" | "errors" | "quiet";

/** One span of the cycle: `[fromMs, toMs)` of sample time. */
export interface PhaseSpan {
  readonly phase: Phase;
  readonly fromMs: number;
  readonly toMs: number;
}

/** The cycle's timeline (see the module documentation). */
export const TIMELINE: readonly PhaseSpan[] = [
  { phase: "steady", fromMs: 0, toMs: 5_000 },
  { phase: "burst", fromMs: 5_000, toMs: 9_000 },
  { phase: "steady", fromMs: 9_000, toMs: 10_000 },
  { phase: "errors", fromMs: 10_000, toMs: 12_000 },
  { phase: "steady", fromMs: 12_000, toMs: 13_000 },
  { phase: "quiet", fromMs: 13_000, toMs: 16_000 },
  { phase: "steady", fromMs: 16_000, toMs: 20_000 },
];

/**
 * The phase at `ms` milliseconds into the cycle (`0 <= ms < CYCLE_MS`).
 *
 * @example Usage
 * ```ts
 * import { phaseAt } from "./scenario.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(phaseAt(6_000), "burst");
 * ```
 */
export function phaseAt(ms: number): Phase {
  for (const span of TIMELINE) if (ms < span.toMs) return span.phase;
  return "steady";
}

/**
 * Where each expected rate sits in a {@linkcode ScenarioRates} array.
 * A `Float64Array` rather than an object with number fields: V8 boxes
 * doubles stored in object fields, which would allocate on every sample.
 */
export const Rate = {
  /** Received bytes per second. */
  rxBytesPerS: 0,
  /** Transmitted bytes per second. */
  txBytesPerS: 1,
  /** Relative amplitude of the uniform noise on traffic (0.1 = ±10 %). */
  trafficNoise: 2,
  /** Mean packet size in bytes, to derive packet counts from bytes. */
  packetBytes: 3,
  /** ECN-marked RoCE packets received per second (notification point). */
  ecnPerS: 4,
  /** CNPs sent per second (notification point). */
  cnpSentPerS: 5,
  /** CNPs received and handled per second (reaction point). */
  cnpHandledPerS: 6,
  /** PFC pause frames received per second. */
  rxPausePerS: 7,
  /** PFC pause frames sent per second. */
  txPausePerS: 8,
  /** Packets discarded for lack of receive buffers per second, at least. */
  discardPerS: 9,
  /** Extra discards per second, spread uniformly on top of the minimum. */
  discardSpreadPerS: 10,
  /** Centre of the PCIe max read latency gauge, in ns. */
  latencyNs: 11,
  /** Half-width of the uniform spread of the latency gauge, in ns. */
  latencySpreadNs: 12,
  /** Probability that a sample's latency gauge shows a short spike. */
  latencySpikeChance: 13,
} as const;

const RATE_COUNT = Object.keys(Rate).length;

/**
 * Expected rates at one moment, indexed by {@linkcode Rate}. The simulator
 * owns one and {@linkcode scenarioAt} overwrites it for each sample, so the
 * per-sample path allocates nothing.
 */
export type ScenarioRates = Float64Array;

/** A zeroed {@linkcode ScenarioRates} for {@linkcode scenarioAt} to fill. */
export function newScenarioRates(): ScenarioRates {
  return new Float64Array(RATE_COUNT);
}

// Steady traffic of a busy training job on a 400 Gb/s port: 25 GB/s in
// (200 Gb/s), a little less out, 4 KiB-MTU RoCE frames mixed with ACKs.
const STEADY_RX = 25e9;
const STEADY_TX = 23e9;
const STEADY_NOISE = 0.08;
const ROCE_PACKET = 3_900;
// "A few pauses": a healthy lossless fabric still pauses now and then.
const STEADY_RX_PAUSE = 20;
const STEADY_TX_PAUSE = 10;
const STEADY_LATENCY = 1_300;
const STEADY_LATENCY_SPREAD = 300;
// Occasional single-sample read-latency spikes, well below the burst level.
const STEADY_SPIKE_CHANCE = 0.002;

// The burst at its peak: incast congestion. Goodput drops, the receiver
// marks ~8 % of packets with ECN and sends CNPs, and once ECN-based
// congestion control cannot keep up, PFC pauses follow (they grow with the
// square of the envelope, so they start later than ECN).
const BURST_START = 5_000;
const BURST_RAMP_UP = 500;
const BURST_PEAK_END = 8_500;
const BURST_END = 9_000;
const BURST_RX_DROP = 0.35;
const BURST_TX_DROP = 0.4;
const BURST_ECN = 0.08 * STEADY_RX / ROCE_PACKET; // ~513 k/s
const BURST_CNP_SENT_SHARE = 0.25; // CNPs are rate-limited per QP
const BURST_CNP_HANDLED = 100_000;
const BURST_RX_PAUSE = 60_000;
const BURST_TX_PAUSE = 40_000;
const BURST_LATENCY = 6_000; // added at the peak
const BURST_LATENCY_SPREAD = 800;

// The error spike: the host stops posting receive buffers fast enough and the
// NIC drops 100-300 k packets/s (>= 10 per 100 us sample).
const ERRORS_START = 10_000;
const ERRORS_END = 12_000;
const ERRORS_DISCARD = 100_000;
const ERRORS_DISCARD_SPREAD = 200_000;

// The quiet spell: the job is checkpointing; only control traffic remains
// (small packets, ~2 MB/s) and PCIe reads are fast.
const QUIET_START = 13_000;
const QUIET_END = 16_000;
const QUIET_RX = 2e6;
const QUIET_TX = 1.5e6;
const QUIET_NOISE = 0.5;
const QUIET_PACKET = 300;
const QUIET_LATENCY = 450;
const QUIET_LATENCY_SPREAD = 150;

/** Burst intensity in [0, 1]: a ramp up, a plateau, a ramp down. */
function burstEnvelope(ms: number): number {
  if (ms < BURST_START || ms >= BURST_END) return 0;
  if (ms < BURST_START + BURST_RAMP_UP) {
    return (ms - BURST_START) / BURST_RAMP_UP;
  }
  if (ms < BURST_PEAK_END) return 1;
  return (BURST_END - ms) / (BURST_END - BURST_PEAK_END);
}

/**
 * Writes the expected rates at `us` microseconds into the cycle
 * (`0 <= us < CYCLE_MS * 1000`) into `out` and returns it.
 *
 * `us` is a whole number on purpose: V8 passes an integer argument as a small
 * integer but boxes a fractional one in a fresh heap number, which on the
 * per-sample path would allocate on every sample.
 *
 * @example Usage
 * ```ts
 * import { newScenarioRates, Rate, scenarioAt } from "./scenario.ts";
 * import assert from "node:assert/strict";
 *
 * const rates = scenarioAt(7_000_000, newScenarioRates());
 * assert.ok(rates[Rate.ecnPerS] > 0);
 * assert.equal(scenarioAt(1_000_000, rates)[Rate.ecnPerS], 0);
 * ```
 */
export function scenarioAt(us: number, out: ScenarioRates): ScenarioRates {
  const ms = us / 1000;
  const quiet = ms >= QUIET_START && ms < QUIET_END;
  const e = burstEnvelope(ms);
  const e2 = e * e;

  out[Rate.rxBytesPerS] = quiet
    ? QUIET_RX
    : STEADY_RX * (1 - BURST_RX_DROP * e);
  out[Rate.txBytesPerS] = quiet
    ? QUIET_TX
    : STEADY_TX * (1 - BURST_TX_DROP * e);
  out[Rate.trafficNoise] = quiet ? QUIET_NOISE : STEADY_NOISE;
  out[Rate.packetBytes] = quiet ? QUIET_PACKET : ROCE_PACKET;

  out[Rate.ecnPerS] = BURST_ECN * e;
  out[Rate.cnpSentPerS] = BURST_ECN * BURST_CNP_SENT_SHARE * e;
  out[Rate.cnpHandledPerS] = BURST_CNP_HANDLED * e;
  out[Rate.rxPausePerS] = quiet ? 0 : STEADY_RX_PAUSE + BURST_RX_PAUSE * e2;
  out[Rate.txPausePerS] = quiet ? 0 : STEADY_TX_PAUSE + BURST_TX_PAUSE * e2;

  const errors = ms >= ERRORS_START && ms < ERRORS_END;
  out[Rate.discardPerS] = errors ? ERRORS_DISCARD : 0;
  out[Rate.discardSpreadPerS] = errors ? ERRORS_DISCARD_SPREAD : 0;

  if (quiet) {
    out[Rate.latencyNs] = QUIET_LATENCY;
    out[Rate.latencySpreadNs] = QUIET_LATENCY_SPREAD;
    out[Rate.latencySpikeChance] = 0;
  } else {
    out[Rate.latencyNs] = STEADY_LATENCY + BURST_LATENCY * e;
    out[Rate.latencySpreadNs] = STEADY_LATENCY_SPREAD +
      (BURST_LATENCY_SPREAD - STEADY_LATENCY_SPREAD) * e;
    out[Rate.latencySpikeChance] = e > 0 ? 0 : STEADY_SPIKE_CHANCE;
  }
  return out;
}
