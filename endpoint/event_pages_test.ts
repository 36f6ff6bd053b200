import assert from "node:assert/strict";
import { join } from "node:path";
import { EventJournal } from "../events/event_journal.ts";
import { eventId, type EventKey } from "../events/event_link.ts";
import { findEvent } from "../review/event_lookup.ts";
import { writeMonitorLog } from "../tests/monitor_log.ts";
import { tempDir } from "../tests/temp_dir.ts";
import type { RuleConfig } from "../config/types.ts";
import { EventPages, MAX_BUILDS } from "./event_pages.ts";
import type { EventsMonitor } from "./events_api.ts";
import type { GpuRingMonitor } from "./gpu_window.ts";
import { SampleRing } from "../rules/ring.ts";
import { sharedRingBuffer } from "../rules/shared_ring.ts";

const T0 = 1_795_272_600_000_000_000n; // 2026-11-21T14:50:00Z
const PERIOD = 100_000n; // 10 kHz
const RULES: RuleConfig[] = [
  {
    name: "rx burst",
    column: 0,
    comparisonType: "gt",
    comparisonValue: 1500n,
    severity: "critical",
    summary: "rx above 1500",
  },
  { name: "latency", column: 0, comparisonType: "gt", comparisonValue: 1500n },
];

/** Monitor `nic` with RULES, idle, writing to `path`. */
function nicMonitor(path: string): EventsMonitor {
  return {
    config: { name: "nic", rules: RULES },
    monitor: {
      samples: 0,
      rules: RULES.map(() => ({ active: false, peak: NaN })),
      ruleChangedAtMs: () => NaN,
    },
    log: { path },
  };
}

/** A log of two events (10 ms, then 1 ms), and the monitor that wrote it. */
async function fixture(dir: string) {
  const path = join(dir, "nic-events.log");
  const first = T0 + 1000n * PERIOD;
  const second = T0 + 5000n * PERIOD;
  await writeMonitorLog({
    path,
    monitor: "nic",
    depth: 64,
    periodNs: PERIOD,
    rules: RULES.map((r) => r.name),
    events: [
      { rule: 0, startNs: first, samples: 100 },
      { rule: 1, startNs: second, samples: 10 },
    ],
  });
  const monitor = nicMonitor(path);
  return { path, monitor, first, second };
}

const key = (rule: string, startNs: bigint): EventKey => ({
  monitor: "nic",
  rule,
  startNs,
});
const text = (a: { body: { bytes: Uint8Array } }) =>
  new TextDecoder().decode(a.body.bytes);

Deno.test("an event's page, from the log alone: its facts and its picture, under a strict policy", async () => {
  await using dir = await tempDir();
  const { monitor, first } = await fixture(dir.path);
  const pages = new EventPages({ monitors: [monitor], now: () => 0 });
  const id = eventId(key("rx burst", first));
  const answer = (await pages.answer(`/events/${id}`))!;
  assert.equal(answer.status, 200);
  assert.equal(answer.body.type, "text/html; charset=utf-8");
  assert.match(
    answer.headers!["content-security-policy"],
    /^default-src 'none'; style-src 'sha256-/,
  );
  const html = text(answer);
  assert.match(html, /<h1>rx burst on nic<\/h1>/);
  assert.match(
    html,
    /<span class="sev critical">critical<\/span> ended after 10 ms/,
  );
  assert.match(html, /<p>rx above 1500<\/p>/);
  assert.match(
    html,
    /<dt>Start<\/dt><dd>2026-11-21T14:50:00.100000000Z \(the start sample\)<\/dd>/,
  );
  assert.match(
    html,
    /<dt>End<\/dt><dd>2026-11-21T14:50:00.110000000Z \(the end sample\)<\/dd>/,
  );
  assert.match(html, /<figure><svg /);
  assert.match(html, /href="\.\/2026-11-21T14:50:00\.100000000Z\/rows\.csv"/);
  assert.ok(
    answer.body.bytes.length < 100_000,
    `${answer.body.bytes.length} bytes`,
  );
});

Deno.test("the rows as CSV and JSON, bounded, named for download", async () => {
  await using dir = await tempDir();
  const { monitor, second } = await fixture(dir.path);
  const pages = new EventPages({ monitors: [monitor], now: () => 0 });
  const id = eventId(key("latency", second));
  const csv = (await pages.answer(`/events/${id}/rows.csv`))!;
  assert.equal(csv.status, 200);
  assert.equal(csv.body.type, "text/csv; charset=utf-8");
  assert.equal(
    csv.headers!["content-disposition"],
    'attachment; filename="nic-latency-1795272600500000000.csv"',
  );
  const lines = text(csv).trim().split("\n");
  assert.equal(lines[0], "time,offset_s,c0 value,c0 rate/sample (/s),c0,c1,c2");
  // The history dump (2 x depth samples) and the event's rows.
  assert.ok(lines.length > 100, `${lines.length} lines`);
  const json = (await pages.answer(`/events/${id}/rows.json`))!;
  assert.equal(json.status, 200);
  const body = JSON.parse(text(json));
  assert.ok(Array.isArray(body.rows) && body.rows.length > 100);
  assert.equal(body.row_limit.reached, false);
});

Deno.test("what is not an event gets a clear 4xx: a bad ID, an unknown monitor, an event the log does not have", async () => {
  await using dir = await tempDir();
  const { monitor, first } = await fixture(dir.path);
  const pages = new EventPages({ monitors: [monitor], now: () => 0 });
  const bad = (await pages.answer("/events/nic/rx%20burst/yesterday"))!;
  assert.equal(bad.status, 400);
  assert.match(text(bad), /^the event ID must be MONITOR\/RULE\/START/);
  const other = (await pages.answer(
    `/events/${eventId({ ...key("rx burst", first), monitor: "gpu" })}`,
  ))!;
  assert.equal(other.status, 404);
  assert.equal(
    text(other),
    'no monitor "gpu" is configured here (monitors: "nic")\n',
  );
  const missing =
    (await pages.answer(`/events/${eventId(key("rx burst", first + 1n))}`))!;
  assert.equal(missing.status, 404);
  assert.match(
    text(missing),
    /no event of rule &quot;rx burst&quot; of monitor &quot;nic&quot; started at 2026-11-21T14:50:00.100000001Z/,
  );
  const rows = (await pages.answer(
    `/events/${eventId(key("rx burst", first + 1n))}/rows.csv`,
  ))!;
  assert.equal(rows.status, 404);
  assert.equal(await pages.answer("/metrics"), undefined);
});

Deno.test("an ended event's page is kept: asked again, the log is not read", async () => {
  await using dir = await tempDir();
  const { monitor, first } = await fixture(dir.path);
  let reads = 0;
  const pages = new EventPages({
    monitors: [monitor],
    now: () => 0,
    find: (log, k, o) => (reads++, findEvent(log, k, o)),
  });
  const path = `/events/${eventId(key("rx burst", first))}`;
  const a = (await pages.answer(path))!;
  const b = (await pages.answer(path))!;
  assert.equal(reads, 1);
  assert.equal(text(a), text(b));
});

Deno.test(`at most ${MAX_BUILDS} pages are drawn at once; the next is told to retry`, async () => {
  await using dir = await tempDir();
  const { monitor, first, second } = await fixture(dir.path);
  const release = Promise.withResolvers<void>();
  const pages = new EventPages({
    monitors: [monitor],
    now: () => 0,
    find: async (log, k, o) => (await release.promise, findEvent(log, k, o)),
  });
  const slow = [first, second].map((t, i) =>
    pages.answer(`/events/${eventId(key(RULES[i].name, t))}`)
  );
  const refused = (await pages.answer(
    `/events/${eventId(key("rx burst", first + PERIOD))}`,
  ))!;
  assert.equal(refused.status, 503);
  assert.equal(refused.headers!["retry-after"], "1");
  release.resolve();
  assert.deepEqual((await Promise.all(slow)).map((a) => a!.status), [200, 200]);
});

Deno.test("an event the agent holds whose log was deleted: the facts it holds and why there is no picture", async () => {
  await using dir = await tempDir();
  const { path, monitor, first } = await fixture(dir.path);
  await Deno.remove(path);
  const journal = EventJournal.create([RULES.length]);
  const at = new Uint32Array([
    Number(first & 0xffff_ffffn),
    Number(first >> 32n),
  ]);
  journal.started(0, 0, at, 0, 1001, Number(first / 1_000_000n), 2000);
  const end = first + 100n * PERIOD;
  journal.ended(
    0,
    0,
    new Uint32Array([Number(end & 0xffff_ffffn), Number(end >> 32n)]),
    0,
    1101,
    2100,
    Number(end / 1_000_000n),
  );
  const pages = new EventPages({ monitors: [monitor], journal, now: () => 0 });
  const answer =
    (await pages.answer(`/events/${eventId(key("rx burst", first))}`))!;
  assert.equal(answer.status, 200);
  const html = text(answer);
  assert.match(html, /<dt>Peak<\/dt><dd>2100<\/dd>/);
  assert.match(html, /<dt>Duration<\/dt><dd>10 ms<\/dd>/);
  assert.match(
    html,
    /the events log \S+nic-events.log is missing: its rows were deleted or never written/,
  );
  assert.doesNotMatch(html, /<figure>|rows\.csv/);
});

// The GPUs behind the NIC, from a GPU monitor's shared ring written here
// as the sampler would (rules/ring.ts publishes what it commits).

const GPU_COLUMNS = [
  "gpu0.gpu_utilization",
  "gpu0.power",
  "gpu1.temperature",
  "gpu1.gpu_utilization",
  "gpu1.power",
].map((name) => ({ name }));
const SECOND = 1_000_000_000n;
const BEHIND = {
  nic: "0000:03:00.0",
  gpus: [{
    index: 1,
    uuid: "GPU-11111111-2222-3333-4444-555555555555",
    busId: "00000000:04:00.0",
    link: "PIX" as const,
  }],
};

/** A GPU monitor sampled once a second at `times` (ns): GPU 1 busy `util` %, drawing `mw` mW. */
function gpuMonitor(
  times: readonly bigint[],
  capacity = 8,
  util = (k: number) => 40 + k,
  mw = (k: number) => 300_000 + 1000 * k,
) {
  const sharedRing = sharedRingBuffer(GPU_COLUMNS.length, capacity);
  const ring = new SampleRing(GPU_COLUMNS.length, capacity, sharedRing);
  const add = (k: number, t: bigint) => {
    const at = ring.claim();
    ring.words[at] = Number(t & 0xffff_ffffn);
    ring.words[at + 1] = Number(t >> 32n);
    const values = [7, 7000, 55, util(k), mw(k)];
    values.forEach((v, c) => ring.words[at + 2 + 2 * c] = v);
    ring.publish();
  };
  times.forEach((t, k) => add(k, t));
  const monitor: EventsMonitor & GpuRingMonitor = {
    config: {
      name: "gpu",
      rules: [],
      source: "nvml",
      samplePeriodNs: 1e9,
      columns: GPU_COLUMNS,
    },
    monitor: { samples: 0, rules: [], ruleChangedAtMs: () => NaN },
    log: { path: "gpu-events.log" },
    sharedRing,
  };
  return { monitor, add };
}

/** Seconds around `t`: t - 3 s, ..., t + 2 s, half a second off the NIC's samples. */
const around = (t: bigint, from = -3, to = 2) =>
  Array.from(
    { length: to - from + 1 },
    (_, i) => t + BigInt(from + i) * SECOND + SECOND / 2n,
  );

Deno.test("a NIC event's page charts the GPUs behind the NIC from the GPU monitor's ring, on the NIC chart's time axis", async () => {
  await using dir = await tempDir();
  const { monitor, first } = await fixture(dir.path);
  const gpu = gpuMonitor(around(first));
  const pages = new EventPages({
    monitors: [{ ...monitor, nicGpus: BEHIND }, gpu.monitor],
    now: () => 0,
  });
  const answer =
    (await pages.answer(`/events/${eventId(key("rx burst", first))}`))!;
  assert.equal(answer.status, 200);
  const html = text(answer);
  const figures = html.split("<figure>").slice(1);
  assert.equal(figures.length, 2, "the NIC's chart, then the GPUs'");
  const svg = figures[1];
  // Only the GPU behind the NIC, named with its link class.
  assert.match(svg, />GPU 1 \(PIX\)<\/text>/);
  assert.doesNotMatch(svg, /GPU 0/);
  assert.match(svg, />GPU utilisation<\/text>/);
  assert.match(svg, />power<\/text>/);
  // The NIC's span (12.8 ms of history, a 10 ms event) falls within the
  // reading taken 0.5 s after the start sample: 43 %, 303 W, one step
  // across the whole axis.
  const paths = [...svg.matchAll(/<path d="([^"]+)"/g)].map((m) => m[1]);
  assert.equal(paths.length, 2);
  for (const d of paths) assert.match(d, /^M64 [\d.]+H548$/);
  assert.match(svg, />40 %<\/text>/, "the utilisation axis reaches 43 %");
  // The numbers in words, for a phone and a text browser.
  assert.match(
    svg,
    /<desc id="gpu-desc">1 sample of the GPU monitor \(one every 1 s\), each drawn as a step over the period it was measured over\. GPU 1 \(PIX\): GPU utilisation 43 %; power 303 W\./,
  );
  assert.match(svg, /seconds from the NIC(&#39;|')s start sample/);
  assert.match(
    svg,
    /<figcaption>GPU 1 \(PIX\): GPU utilisation 43 %; power 303 W\. The GPUs behind the NIC, from the GPU monitor &quot;gpu&quot;: each reading drawn over the 1 s it was measured over, on the time axis of the chart above\. Not read by that monitor: PCIe throughput\.<\/figcaption>/,
  );
  // Colours in attributes: the page's policy allows no style attribute.
  assert.doesNotMatch(html, / style=|<script/);
  assert.ok(
    answer.body.bytes.length < 100_000,
    `${answer.body.bytes.length} bytes`,
  );
});

Deno.test("a NIC event older than the GPU monitor's ring says so in one line", async () => {
  await using dir = await tempDir();
  const { monitor, first } = await fixture(dir.path);
  // Four samples, the oldest 10 s after the event.
  const gpu = gpuMonitor(around(first + 10n * SECOND, 0, 5), 4);
  const pages = new EventPages({
    monitors: [{ ...monitor, nicGpus: BEHIND }, gpu.monitor],
    now: () => 0,
  });
  const html = text(
    (await pages.answer(`/events/${eventId(key("rx burst", first))}`))!,
  );
  assert.equal(html.split("<figure>").length, 2, "the NIC's chart alone");
  assert.match(
    html,
    /<p>GPUs: the GPU monitor &quot;gpu&quot; keeps the last 4 s \(4 samples, one every 1 s\); this event is older\.<\/p>/,
  );
});

Deno.test("a NIC event just past the GPU monitor's newest sample: drawn so far, and drawn afresh once the sample comes", async () => {
  await using dir = await tempDir();
  const { monitor, first } = await fixture(dir.path);
  // The newest GPU sample is 0.5 s before the event's start.
  const gpu = gpuMonitor(around(first, -3, -1));
  const pages = new EventPages({
    monitors: [{ ...monitor, nicGpus: BEHIND }, gpu.monitor],
    now: () => 0,
  });
  const path = `/events/${eventId(key("rx burst", first))}`;
  const before = text((await pages.answer(path))!);
  assert.match(
    before,
    /<p>GPUs: the GPU monitor &quot;gpu&quot;&#39;s reading over this chart is still to come \(one every 1 s\): reload in a moment\.<\/p>/,
  );
  // Not kept: the next sample, covering the event, shows on the next ask.
  gpu.add(3, first + SECOND / 2n);
  const after = text((await pages.answer(path))!);
  assert.doesNotMatch(after, /still to come/);
  assert.match(after.split("<figure>")[2], /<path d="M64 [\d.]+H548"/);
});

Deno.test("a page with no GPU to chart is as it was: no GPU behind the NIC, or no GPU monitor", async () => {
  await using dir = await tempDir();
  const { monitor, first } = await fixture(dir.path);
  const path = `/events/${eventId(key("rx burst", first))}`;
  const alone = text(
    (await new EventPages({ monitors: [monitor], now: () => 0 }).answer(path))!,
  );
  const gpu = gpuMonitor(around(first));
  // A GPU monitor runs, but nothing is behind this NIC.
  const noneBehind = text(
    (await new EventPages({
      monitors: [{
        ...monitor,
        nicGpus: { nic: "0000:03:00.0", gpus: [], none: "NVML lists no GPU" },
      }, gpu.monitor],
      now: () => 0,
    }).answer(path))!,
  );
  assert.equal(
    noneBehind,
    alone.replace(
      "<dt>Samples</dt>",
      "<dt>GPUs behind 0000:03:00.0</dt><dd>none known (NVML lists no GPU)</dd>\n<dt>Samples</dt>",
    ),
  );
  // GPUs behind it, but no GPU monitor: they are named, not charted.
  const noMonitor = text(
    (await new EventPages({
      monitors: [{ ...monitor, nicGpus: BEHIND }],
      now: () => 0,
    }).answer(path))!,
  );
  assert.equal(noMonitor.split("<figure>").length, 2);
  assert.doesNotMatch(noMonitor, /GPUs: |GPU monitor/);
});

Deno.test("a page while the log rotates: an event now in a rotated file is still found there", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "nic-events.log");
  const starts = [1000n, 4000n, 7000n, 10000n].map((k) => T0 + k * PERIOD);
  await writeMonitorLog({
    path,
    monitor: "nic",
    depth: 64,
    periodNs: PERIOD,
    rules: RULES.map((r) => r.name),
    // Small files: each event's run rotates the log on.
    events: starts.map((startNs) => ({ rule: 0, startNs, samples: 200 })),
    maxBytes: 40_000,
    keep: 5,
  });
  const rotated = [...Deno.readDirSync(dir.path)].map((e) => e.name).sort();
  assert.ok(rotated.length > 1, rotated.join(", "));
  const monitor = nicMonitor(path);
  const pages = new EventPages({ monitors: [monitor], now: () => 0 });
  for (const startNs of starts) {
    const answer =
      (await pages.answer(`/events/${eventId(key("rx burst", startNs))}`))!;
    assert.equal(answer.status, 200, text(answer));
    assert.match(text(answer), /<figure><svg /);
  }
});
