import assert from "node:assert/strict";
import {
  contentTypeOf,
  type ExpositionFormat,
  ExpositionWriter,
  formatLabels,
  formatValue,
  negotiateFormat,
  OPENMETRICS_CONTENT_TYPE,
  PROMETHEUS_CONTENT_TYPE,
} from "./exposition.ts";

/** A small exposition with one family of each type, written in `format`. */
function writeSample(format: ExpositionFormat): string {
  const nic = formatLabels([["monitor", "nic"]]);
  const odd = formatLabels([
    ["monitor", "nic"],
    ["rule", 'rx "fast"\\slow\nnext'],
  ]);
  return new ExpositionWriter(format)
    .family(
      "dpu_traceback_build",
      "info",
      "Agent and runtime versions.",
    )
    .sample(formatLabels([["version", "0.1.0"], ["deno", "2.9.6"]]), 1)
    .family(
      "dpu_traceback_samples",
      "counter",
      'Samples processed by the monitor ("sampled" \\ read).',
    )
    .sample(nic, 5)
    .sample(odd, 12345678901234)
    .family(
      "dpu_traceback_source_data_age_seconds",
      "gauge",
      "Host time since the source last delivered a sample.\nSecond line.",
      "seconds",
    )
    .sample(nic, 0.25)
    .sample(odd, NaN)
    .family("process_start_time_seconds", "gauge", "Start time.", "seconds")
    .sample("", 1700000000)
    .family(
      "dpu_traceback_poll_lateness_seconds",
      "histogram",
      "How long after it was due each poll of the source ran.",
      "seconds",
    )
    .histogram(
      nic,
      [0.005, 0.25, 1, 2.5],
      new Float64Array([3, 0, 2, 1, 4]),
      12.75,
    )
    .histogram(odd, [0.005, 0.25, 1, 2.5], [0, 0, 0, 0, 0], 0)
    .finish();
}

Deno.test("ExpositionWriter writes Prometheus text format 0.0.4", () => {
  assert.equal(
    writeSample("prometheus"),
    `# HELP dpu_traceback_build_info Agent and runtime versions.
# TYPE dpu_traceback_build_info gauge
dpu_traceback_build_info{version="0.1.0",deno="2.9.6"} 1
# HELP dpu_traceback_samples_total Samples processed by the monitor ("sampled" \\\\ read).
# TYPE dpu_traceback_samples_total counter
dpu_traceback_samples_total{monitor="nic"} 5
dpu_traceback_samples_total{monitor="nic",rule="rx \\"fast\\"\\\\slow\\nnext"} 12345678901234
# HELP dpu_traceback_source_data_age_seconds Host time since the source last delivered a sample.\\nSecond line.
# TYPE dpu_traceback_source_data_age_seconds gauge
dpu_traceback_source_data_age_seconds{monitor="nic"} 0.25
dpu_traceback_source_data_age_seconds{monitor="nic",rule="rx \\"fast\\"\\\\slow\\nnext"} NaN
# HELP process_start_time_seconds Start time.
# TYPE process_start_time_seconds gauge
process_start_time_seconds 1700000000
# HELP dpu_traceback_poll_lateness_seconds How long after it was due each poll of the source ran.
# TYPE dpu_traceback_poll_lateness_seconds histogram
dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",le="0.005"} 3
dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",le="0.25"} 3
dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",le="1"} 5
dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",le="2.5"} 6
dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",le="+Inf"} 10
dpu_traceback_poll_lateness_seconds_sum{monitor="nic"} 12.75
dpu_traceback_poll_lateness_seconds_count{monitor="nic"} 10
dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",rule="rx \\"fast\\"\\\\slow\\nnext",le="0.005"} 0
dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",rule="rx \\"fast\\"\\\\slow\\nnext",le="0.25"} 0
dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",rule="rx \\"fast\\"\\\\slow\\nnext",le="1"} 0
dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",rule="rx \\"fast\\"\\\\slow\\nnext",le="2.5"} 0
dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",rule="rx \\"fast\\"\\\\slow\\nnext",le="+Inf"} 0
dpu_traceback_poll_lateness_seconds_sum{monitor="nic",rule="rx \\"fast\\"\\\\slow\\nnext"} 0
dpu_traceback_poll_lateness_seconds_count{monitor="nic",rule="rx \\"fast\\"\\\\slow\\nnext"} 0
`,
  );
});

Deno.test("ExpositionWriter writes OpenMetrics 1.0 text", () => {
  assert.equal(
    writeSample("openmetrics"),
    `# TYPE dpu_traceback_build info
# HELP dpu_traceback_build Agent and runtime versions.
dpu_traceback_build_info{version="0.1.0",deno="2.9.6"} 1
# TYPE dpu_traceback_samples counter
# HELP dpu_traceback_samples Samples processed by the monitor (\\"sampled\\" \\\\ read).
dpu_traceback_samples_total{monitor="nic"} 5
dpu_traceback_samples_total{monitor="nic",rule="rx \\"fast\\"\\\\slow\\nnext"} 12345678901234
# TYPE dpu_traceback_source_data_age_seconds gauge
# UNIT dpu_traceback_source_data_age_seconds seconds
# HELP dpu_traceback_source_data_age_seconds Host time since the source last delivered a sample.\\nSecond line.
dpu_traceback_source_data_age_seconds{monitor="nic"} 0.25
dpu_traceback_source_data_age_seconds{monitor="nic",rule="rx \\"fast\\"\\\\slow\\nnext"} NaN
# TYPE process_start_time_seconds gauge
# UNIT process_start_time_seconds seconds
# HELP process_start_time_seconds Start time.
process_start_time_seconds 1700000000
# TYPE dpu_traceback_poll_lateness_seconds histogram
# UNIT dpu_traceback_poll_lateness_seconds seconds
# HELP dpu_traceback_poll_lateness_seconds How long after it was due each poll of the source ran.
dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",le="0.005"} 3
dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",le="0.25"} 3
dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",le="1.0"} 5
dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",le="2.5"} 6
dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",le="+Inf"} 10
dpu_traceback_poll_lateness_seconds_sum{monitor="nic"} 12.75
dpu_traceback_poll_lateness_seconds_count{monitor="nic"} 10
dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",rule="rx \\"fast\\"\\\\slow\\nnext",le="0.005"} 0
dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",rule="rx \\"fast\\"\\\\slow\\nnext",le="0.25"} 0
dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",rule="rx \\"fast\\"\\\\slow\\nnext",le="1.0"} 0
dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",rule="rx \\"fast\\"\\\\slow\\nnext",le="2.5"} 0
dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",rule="rx \\"fast\\"\\\\slow\\nnext",le="+Inf"} 0
dpu_traceback_poll_lateness_seconds_sum{monitor="nic",rule="rx \\"fast\\"\\\\slow\\nnext"} 0
dpu_traceback_poll_lateness_seconds_count{monitor="nic",rule="rx \\"fast\\"\\\\slow\\nnext"} 0
# EOF
`,
  );
});

Deno.test("ExpositionWriter: counter units go before _total in OpenMetrics", () => {
  const write = (format: ExpositionFormat) =>
    new ExpositionWriter(format)
      .family("process_cpu_seconds", "counter", "CPU time.", "seconds")
      .sample("", 1.5)
      .finish();
  assert.equal(
    write("openmetrics"),
    "# TYPE process_cpu_seconds counter\n" +
      "# UNIT process_cpu_seconds seconds\n" +
      "# HELP process_cpu_seconds CPU time.\n" +
      "process_cpu_seconds_total 1.5\n" +
      "# EOF\n",
  );
  assert.equal(
    write("prometheus"),
    "# HELP process_cpu_seconds_total CPU time.\n" +
      "# TYPE process_cpu_seconds_total counter\n" +
      "process_cpu_seconds_total 1.5\n",
  );
});

Deno.test("ExpositionWriter: empty expositions and families", () => {
  assert.equal(new ExpositionWriter("prometheus").finish(), "");
  assert.equal(new ExpositionWriter("openmetrics").finish(), "# EOF\n");
  // A family with no series yet still declares itself.
  assert.equal(
    new ExpositionWriter("openmetrics").family("x", "gauge", "").finish(),
    "# TYPE x gauge\n# HELP x \n# EOF\n",
  );
  // finish() does not close the writer or repeat # EOF.
  const w = new ExpositionWriter("openmetrics").family("a", "gauge", "A.");
  w.finish();
  assert.equal(
    w.sample("", 1).finish(),
    "# TYPE a gauge\n# HELP a A.\na 1\n# EOF\n",
  );
});

Deno.test("ExpositionWriter: family names are per writer", () => {
  for (let i = 0; i < 2; i++) {
    assert.equal(
      new ExpositionWriter("prometheus").family("up", "gauge", "Up.")
        .sample("", 1).finish(),
      "# HELP up Up.\n# TYPE up gauge\nup 1\n",
    );
  }
});

Deno.test("ExpositionWriter.histogram: le values per format", () => {
  const bounds = [
    -1,
    0,
    1e-10,
    1e-9,
    1e-5,
    0.0001,
    0.001,
    0.0005,
    0.002,
    0.01,
    0.1,
    0.9,
    0.95,
    0.99,
    0.999,
    1,
    1.7,
    10,
    100000,
    123456.5,
    1e6,
    1234567,
    1e10,
    1e23,
    1.1e23,
  ].sort((a, b) => a - b);
  const les = (format: ExpositionFormat) =>
    [
      ...new ExpositionWriter(format)
        .family("h", "histogram", "")
        .histogram("", bounds, new Array(bounds.length + 1).fill(1), 1)
        .finish()
        .matchAll(/le="([^"]*)"/g),
    ].map((m) => m[1]);
  // OpenMetrics's canonical numbers: its spec's examples are Go's %g with
  // ".0" added to integers.
  assert.deepEqual(les("openmetrics"), [
    "-1.0",
    "0.0",
    "1e-10",
    "1e-09",
    "1e-05",
    "0.0001",
    "0.0005",
    "0.001",
    "0.002",
    "0.01",
    "0.1",
    "0.9",
    "0.95",
    "0.99",
    "0.999",
    "1.0",
    "1.7",
    "10.0",
    "100000.0",
    "123456.5",
    "1e+06",
    "1.234567e+06",
    "1e+10",
    "1e+23",
    "1.1e+23",
    "+Inf",
  ]);
  assert.deepEqual(les("prometheus"), [
    "-1",
    "0",
    "1e-10",
    "1e-9",
    "0.00001",
    "0.0001",
    "0.0005",
    "0.001",
    "0.002",
    "0.01",
    "0.1",
    "0.9",
    "0.95",
    "0.99",
    "0.999",
    "1",
    "1.7",
    "10",
    "100000",
    "123456.5",
    "1000000",
    "1234567",
    "10000000000",
    "1e+23",
    "1.1e+23",
    "+Inf",
  ]);
});

Deno.test("ExpositionWriter.histogram: counts are made cumulative; _count is the +Inf bucket", () => {
  const text = new ExpositionWriter("prometheus")
    .family("h", "histogram", "H.")
    .histogram("", [], [7], 3.5)
    .histogram(formatLabels([["a", "1"]]), [1], new Float64Array([2, 0]), -1)
    .finish();
  assert.equal(
    text,
    `# HELP h H.
# TYPE h histogram
h_bucket{le="+Inf"} 7
h_sum 3.5
h_count 7
h_bucket{a="1",le="1"} 2
h_bucket{a="1",le="+Inf"} 2
h_sum{a="1"} -1
h_count{a="1"} 2
`,
  );
});

Deno.test("ExpositionWriter.histogram: a bounds array changed in place is re-read", () => {
  const bounds = [1, 2];
  const les = () =>
    [
      ...new ExpositionWriter("openmetrics")
        .family("h", "histogram", "")
        .histogram("", bounds, [0, 0, 0], 0)
        .finish()
        .matchAll(/le="([^"]*)"/g),
    ].map((m) => m[1]);
  assert.deepEqual(les(), ["1.0", "2.0", "+Inf"]);
  assert.deepEqual(les(), ["1.0", "2.0", "+Inf"]);
  bounds[1] = 5;
  assert.deepEqual(les(), ["1.0", "5.0", "+Inf"]);
  bounds.push(6);
  assert.throws(
    () =>
      new ExpositionWriter("openmetrics").family("h", "histogram", "")
        .histogram("", bounds, [0, 0, 0], 0),
    RangeError,
  );
  assert.deepEqual(
    new ExpositionWriter("openmetrics").family("h", "histogram", "")
      .histogram("", bounds, [0, 0, 0, 0], 0).finish()
      .match(/le="[^"]*"/g),
    ['le="1.0"', 'le="5.0"', 'le="6.0"', 'le="+Inf"'],
  );
});

Deno.test("negotiateFormat() reads Accept headers", () => {
  const table: [string | null | undefined, ExpositionFormat][] = [
    // Prometheus 2.x.
    [
      "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
      "openmetrics",
    ],
    // Shaped like Prometheus 3.x's default (escaping, text format 1.0.0).
    [
      "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
      "openmetrics",
    ],
    // Prometheus 3.x told to prefer the text format.
    [
      "text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.3,*/*;q=0.2",
      "prometheus",
    ],
    // Older Prometheus that knew only the OpenMetrics draft.
    [
      "application/openmetrics-text; version=0.0.1,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
      "prometheus",
    ],
    [null, "prometheus"],
    [undefined, "prometheus"],
    ["", "prometheus"],
    ["*/*", "prometheus"],
    ["text/plain", "prometheus"],
    ["text/plain;version=0.0.4", "prometheus"],
    ["application/openmetrics-text;version=0.0.1", "prometheus"],
    ["application/openmetrics-text", "openmetrics"],
    ["application/openmetrics-text;version=1.0.0", "openmetrics"],
    // Spaces, case and quoting.
    [
      ' Application/OpenMetrics-Text ; Version = "1.0.0" ; Q = 0.9 , TEXT/PLAIN ; q=0.8 ',
      "openmetrics",
    ],
    // q values: a tie goes to OpenMetrics, q=0 refuses.
    ["application/openmetrics-text;q=0.5,text/plain;q=0.5", "openmetrics"],
    ["application/openmetrics-text;q=0.4,text/plain;q=0.5", "prometheus"],
    ["application/openmetrics-text;q=0.5,*/*", "prometheus"],
    ["application/openmetrics-text;q=0.5,text/*;q=0.6", "prometheus"],
    ["application/openmetrics-text;q=0", "prometheus"],
    ["application/openmetrics-text;q=0.001", "openmetrics"],
    // The most specific range decides.
    [
      "application/openmetrics-text;version=1.0.0;q=0,application/openmetrics-text",
      "prometheus",
    ],
    ["application/openmetrics-text;q=0.5,text/plain;q=0,*/*", "openmetrics"],
    [
      "application/openmetrics-text;q=0.5,text/plain;version=0.0.4;q=0.1,text/plain;q=1",
      "openmetrics",
    ],
    // Nothing acceptable to either: Prometheus format, the default.
    ["application/json", "prometheus"],
    ["image/*", "prometheus"],
    // Garbage.
    ["application/openmetrics-text;q=abc", "prometheus"],
    ["application/openmetrics-text;q=", "prometheus"],
    ["application/openmetrics-text;q=2", "prometheus"],
    ["application/openmetrics-text;q=-1", "prometheus"],
    ["application/openmetrics-text;version", "openmetrics"],
    [",,;;,", "prometheus"],
    ["=;=,=", "prometheus"],
    ["application/openmetrics-text-x", "prometheus"],
    ["\u0000\uffff", "prometheus"],
    ["application/openmetrics-text, garbage;;q=;", "openmetrics"],
  ];
  for (const [accept, expected] of table) {
    assert.equal(negotiateFormat(accept), expected, `Accept: ${accept}`);
    // The second call for the same header is answered from memory.
    assert.equal(negotiateFormat(accept), expected, `Accept: ${accept}`);
  }
});

Deno.test("contentTypeOf() gives each format's content type", () => {
  assert.equal(contentTypeOf("prometheus"), PROMETHEUS_CONTENT_TYPE);
  assert.equal(contentTypeOf("openmetrics"), OPENMETRICS_CONTENT_TYPE);
  assert.equal(
    OPENMETRICS_CONTENT_TYPE,
    "application/openmetrics-text; version=1.0.0; charset=utf-8",
  );
  assert.equal(
    PROMETHEUS_CONTENT_TYPE,
    "text/plain; version=0.0.4; charset=utf-8",
  );
});

Deno.test("formatValue() writes numbers both formats read", () => {
  const table: [number, string][] = [
    [0, "0"],
    [-0, "0"],
    [1, "1"],
    [-1, "-1"],
    [42, "42"],
    [1.5, "1.5"],
    [0.1 + 0.2, "0.30000000000000004"],
    [12345678901234, "12345678901234"],
    [2 ** 53, "9007199254740992"],
    [1e20, "100000000000000000000"],
    [1e21, "1e+21"],
    [-1e21, "-1e+21"],
    [1.5e300, "1.5e+300"],
    [1e-7, "1e-7"],
    [1.25e-7, "1.25e-7"],
    [0.000001, "0.000001"],
    [Number.MIN_VALUE, "5e-324"],
    [Number.MAX_VALUE, "1.7976931348623157e+308"],
    [NaN, "NaN"],
    [Infinity, "+Inf"],
    [-Infinity, "-Inf"],
  ];
  for (const [value, text] of table) {
    assert.equal(formatValue(value), text, String(value));
    // It reads back as the same number (-0 as 0, which compare equal).
    const back = Number(text.replace("Inf", "Infinity"));
    assert.ok(back === value || (Number.isNaN(back) && Number.isNaN(value)));
  }
});

Deno.test("formatLabels() renders and escapes", () => {
  assert.equal(formatLabels([]), "");
  assert.equal(formatLabels([["a", ""]]), '{a=""}');
  assert.equal(
    formatLabels([["monitor", "nic"], ["rule", 'a "b"']]),
    '{monitor="nic",rule="a \\"b\\""}',
  );
  assert.equal(
    formatLabels([["_x", "back\\slash\nnew line\ttab \u00e9 \u{1f600}"]]),
    '{_x="back\\\\slash\\nnew line\ttab \u00e9 \u{1f600}"}',
  );
  assert.equal(formatLabels([["Z9_", "\\\\"]]), '{Z9_="\\\\\\\\"}');
});

Deno.test("formatLabels() rejects bad label names", () => {
  for (const name of ["", "1a", "a-b", "a.b", "é", "a b", "__name__", "__"]) {
    assert.throws(() => formatLabels([["ok", "1"], [name, "x"]]), TypeError);
  }
  assert.throws(
    () => formatLabels([["a", "1"], ["b", "2"], ["a", "3"]]),
    {
      name: "TypeError",
      message: 'Cannot render label "a": it appears twice in one set',
    },
  );
  assert.throws(() => formatLabels([["__x", "1"]]), {
    message:
      'Cannot render label "__x": label names starting with __ are reserved',
  });
  assert.throws(() => formatLabels([["a\nb", "1"]]), {
    message:
      'Cannot render label "a\\nb": label names must match [a-zA-Z_][a-zA-Z0-9_]*',
  });
});

Deno.test("ExpositionWriter.family() rejects bad families", () => {
  const cases: [
    (w: ExpositionWriter) => unknown,
    string,
  ][] = [
    [
      (w) => w.family("dpu_traceback_samples_total", "counter", ""),
      'Cannot write metric family "dpu_traceback_samples_total": counter names must not end in _total',
    ],
    [
      (w) => w.family("build_info", "info", ""),
      'Cannot write metric family "build_info": info names must not end in _info',
    ],
    [
      (w) => w.family("1x", "gauge", ""),
      'Cannot write metric family "1x": metric names must match [a-zA-Z_:][a-zA-Z0-9_:]*',
    ],
    [
      (w) => w.family("", "gauge", ""),
      'Cannot write metric family "": metric names must match [a-zA-Z_:][a-zA-Z0-9_:]*',
    ],
    [
      (w) => w.family("a-b", "gauge", ""),
      'Cannot write metric family "a-b": metric names must match [a-zA-Z_:][a-zA-Z0-9_:]*',
    ],
    [
      (w) => w.family("age", "gauge", "", "seconds"),
      'Cannot write metric family "age": the name must end in _seconds to carry unit "seconds"',
    ],
    [
      (w) => w.family("ageseconds", "gauge", "", "seconds"),
      'Cannot write metric family "ageseconds": the name must end in _seconds to carry unit "seconds"',
    ],
    [
      (w) => w.family("build_seconds", "info", "", "seconds"),
      'Cannot write metric family "build_seconds": info families have no unit',
    ],
    [
      (w) => w.family("x", "summary" as "gauge", ""),
      'Cannot write metric family "x": "summary" is not a type (counter, gauge, histogram, info)',
    ],
    [
      (w) => w.family("x", "toString" as "gauge", ""),
      'Cannot write metric family "x": "toString" is not a type (counter, gauge, histogram, info)',
    ],
    [
      (w) => w.family("up", "gauge", "").family("up", "gauge", ""),
      'Cannot write metric family "up": it is already written',
    ],
    [
      (w) => w.family("up", "gauge", "").family("up", "counter", ""),
      'Cannot write metric family "up": it is already written',
    ],
    [
      (w) => w.family("x", "counter", "").family("x_total", "gauge", ""),
      'Cannot write metric family "x_total": its samples would clash with family "x"',
    ],
    [
      (w) => w.family("x_info", "gauge", "").family("x", "info", ""),
      'Cannot write metric family "x": its samples would clash with family "x_info"',
    ],
    [
      (w) => w.family("h", "histogram", "").family("h_count", "counter", ""),
      'Cannot write metric family "h_count": its samples would clash with family "h"',
    ],
  ];
  for (const format of ["prometheus", "openmetrics"] as const) {
    for (const [write, message] of cases) {
      assert.throws(() => write(new ExpositionWriter(format)), {
        name: "TypeError",
        message,
      });
    }
  }
  assert.throws(() => new ExpositionWriter("json" as "prometheus"), TypeError);
  // Not errors: a unit that is the whole last word, colons, an empty unit.
  assert.equal(
    new ExpositionWriter("openmetrics")
      .family("a:b_bytes", "gauge", "", "bytes")
      .family("c", "gauge", "", "")
      .family("x_total_count", "gauge", "")
      .finish(),
    "# TYPE a:b_bytes gauge\n# UNIT a:b_bytes bytes\n# HELP a:b_bytes \n" +
      "# TYPE c gauge\n# HELP c \n" +
      "# TYPE x_total_count gauge\n# HELP x_total_count \n# EOF\n",
  );
});

Deno.test("ExpositionWriter.sample() and histogram() reject misuse", () => {
  const w = new ExpositionWriter("prometheus");
  assert.throws(() => w.sample("", 1), {
    name: "TypeError",
    message: "Cannot write a sample: no metric family has been started",
  });
  assert.throws(() => w.histogram("", [1], [0, 0], 0), {
    name: "TypeError",
    message: "Cannot write a histogram: no metric family has been started",
  });
  w.family("g", "gauge", "");
  assert.throws(() => w.histogram("", [1], [0, 0], 0), {
    name: "TypeError",
    message: 'Cannot write a histogram in family "g": it is a gauge',
  });
  assert.throws(() => w.sample('monitor="nic"', 1), {
    name: "TypeError",
    message:
      'Cannot write a sample of "g": labels "monitor=\\"nic\\"" are not a set from formatLabels()',
  });
  w.family("h", "histogram", "");
  assert.throws(() => w.sample("", 1), {
    name: "TypeError",
    message: 'Cannot write a sample of histogram "h": use histogram()',
  });
  assert.throws(() => w.histogram("", [1, 2], [0, 0], 0), {
    name: "RangeError",
    message:
      'Cannot write histogram "h": 2 counts for 2 bounds (expected 3, the last for values above every bound)',
  });
  assert.throws(() => w.histogram("", [2, 1], [0, 0, 0], 0), {
    name: "RangeError",
    message:
      'Cannot write histogram "h": bound 1 (1) is below the one before; bounds must ascend',
  });
  assert.throws(() => w.histogram("", [1, 1], [0, 0, 0], 0), {
    name: "RangeError",
    message:
      'Cannot write histogram "h": bound 1 (1) repeats the one before; bounds must ascend',
  });
  assert.throws(() => w.histogram("", [1, Infinity], [0, 0, 0], 0), {
    name: "RangeError",
    message:
      'Cannot write histogram "h": bound 1 is Infinity; bounds must be finite (+Inf is added)',
  });
  assert.throws(() => w.histogram("", [NaN], [0, 0], 0), RangeError);
  assert.throws(() => w.histogram("", [1, NaN], [0, 0, 0], 0), RangeError);
  assert.throws(
    () => w.histogram(formatLabels([["le", "1"]]), [1], [0, 0], 0),
    {
      name: "TypeError",
      message:
        'Cannot write histogram "h": its labels {le="1"} already have le',
    },
  );
  // None of the failed calls wrote anything.
  assert.equal(
    w.finish(),
    "# HELP g \n# TYPE g gauge\n# HELP h \n# TYPE h histogram\n",
  );
});
