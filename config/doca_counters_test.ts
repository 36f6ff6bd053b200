import assert from "node:assert/strict";
import {
  DOCA_COUNTERS,
  docaCounterIds,
  docaCounterName,
  docaDataId,
} from "./doca_counters.ts";
import { parseConfig } from "./load.ts";

Deno.test("docaDataId() encodes port in byte 0 and priority in byte 1, as the DOCA samples do", () => {
  // The IDs written out in docs/spec/doca-nvml-abi.md §2.
  const cases: [string, string][] = [
    ["rx_bytes{port=0}", "0x1020000100000000"],
    ["rx_bytes{port=1}", "0x1020000100000001"],
    ["rx_discard_buf_packets{port=0}", "0x1020000500000000"],
    ["priority_rx_pause_packets{port=0,priority=3}", "0x1020000600000300"],
    ["priority_tx_pause_packets{port=1,priority=7}", "0x1140000500000701"],
    ["rx_transport_ecn_packets{port=0}", "0x1080000400000000"],
    ["tx_transport_cnp_sent_packets{port=0}", "0x1100000100000000"],
    ["tx_transport_done_due_to_cc_deschedule_events", "0x1100000200000000"],
    ["global_icmc_miss", "0x1180000300000000"],
    ["rx_bytes{port=255}", "0x10200001000000ff"],
  ];
  for (const [name, id] of cases) {
    assert.deepEqual(docaDataId(name), { ok: true, dataId: id }, name);
    assert.equal(docaCounterName(id), name.replace("priority=3,port=0", ""));
  }
});

Deno.test("docaDataId() refuses what it cannot encode, saying how to write it", () => {
  const cases: [string, string][] = [
    [
      "rx_bytes",
      "must give rx_bytes's port: it is counted per port, write rx_bytes{port=N}",
    ],
    [
      "priority_rx_bytes{port=0}",
      "must give priority_rx_bytes's priority: it is counted per port and priority, write priority_rx_bytes{port=N,priority=N}",
    ],
    [
      "global_icmc_hit{port=0}",
      "must not give global_icmc_hit a port (it is one per device): write global_icmc_hit",
    ],
    [
      "rx_bytes{port=0,priority=1}",
      "must not give rx_bytes a priority: write rx_bytes{port=N}",
    ],
    ["rx_bytes{port=0,port=1}", "must give rx_bytes's port once"],
    [
      "rx_bytes{lane=0}",
      'must label rx_bytes with port=N or priority=N, got "lane=0"',
    ],
    ["rx_bytes{port=256}", "must give rx_bytes a port from 0 to 255, got 256"],
    [
      "priority_rx_bytes{port=0,priority=8}",
      "must give priority_rx_bytes a priority from 0 to 7, got 8",
    ],
    [
      "rx_byte{port=0}",
      "names rx_byte, which is no DOCA counter the agent knows by name; did you mean rx_bytes, tx_bytes? (others can be given as a hex data ID)",
    ],
    [
      "RX_BYTES",
      'must be a hex data ID such as "0x1020000100000000" or a DOCA counter name such as "rx_bytes{port=0}"',
    ],
    [
      "rx_bytes{port=0}x",
      'must be a hex data ID such as "0x1020000100000000" or a DOCA counter name such as "rx_bytes{port=0}"',
    ],
  ];
  for (const [name, problem] of cases) {
    const parsed = docaDataId(name);
    assert.equal(parsed.ok, false, name);
    assert.equal(!parsed.ok && parsed.problem, problem);
  }
});

Deno.test("docaCounterName() names only IDs a name can stand for", () => {
  assert.equal(docaCounterName("0x1020000100000003"), "rx_bytes{port=3}");
  assert.equal(
    docaCounterName("0x1020000200000501"),
    "priority_rx_bytes{port=1,priority=5}",
  );
  assert.equal(docaCounterName("0x1020000200000801"), undefined); // priority 8
  assert.equal(docaCounterName("0x1180000100000001"), undefined); // a port on a device counter
  assert.equal(docaCounterName("0x1020000100010000"), undefined); // bytes 2-3 set
  assert.equal(docaCounterName("0x1160000600030201"), undefined); // not in the table
  assert.equal(docaCounterName("rx_bytes"), undefined);
});

Deno.test("docaCounterIds() lists every name once per port, each with its ID", () => {
  const ids = docaCounterIds([0, 1]);
  const per = (scope: string) =>
    DOCA_COUNTERS.filter((c) => c.scope === scope).length;
  assert.equal(
    ids.length,
    2 * (per("port") + 8 * per("priority")) + per("device"),
  );
  assert.equal(new Set(ids.map((i) => i.dataId)).size, ids.length);
  for (const { name, dataId } of ids) {
    assert.deepEqual(docaDataId(name), { ok: true, dataId });
    assert.equal(docaCounterName(dataId), name);
  }
});

Deno.test("a configuration may name DOCA columns and rules' data_id by counter name", () => {
  const config = parseConfig(
    `
monitors:
  - name: nic
    source: sim
    columns:
      - { name: pause, data_id: "priority_rx_pause_packets{port=0,priority=3}" }
      - { name: rx, data_id: "0x1020000100000000" }
    rules:
      - { name: r, data_id: "rx_bytes{port=0}", comparison_type: gt, comparison_value: 5 }
`,
    "agent.yaml",
  );
  const [nic] = config.monitors;
  assert.deepEqual(nic.columns.map((c) => c.dataId), [
    "0x1020000600000300",
    "0x1020000100000000",
  ]);
  assert.equal(nic.rules[0].column, 1);
  assert.throws(
    () =>
      parseConfig(
        `
monitors:
  - name: nic
    source: sim
    columns: [{ name: rx, data_id: "rx_bytes" }]
`,
        "agent.yaml",
      ),
    {
      message:
        'Cannot load config agent.yaml:5: monitors[0].columns[0] ("rx").data_id must give rx_bytes\'s port: it is counted per port, write rx_bytes{port=N}, got "rx_bytes"',
    },
  );
});

Deno.test("docs/doca-counters.md's table is the agent's table, row for row", async () => {
  const text = await Deno.readTextFile(
    new URL("../docs/doca-counters.md", import.meta.url),
  );
  const rows = [
    ...text.matchAll(/^\| `([^`]+)` +\| `(0x[0-9a-f]{16})` +\| (.+?) +\|$/gm),
  ]
    .map(([, written, id, meaning]) => ({ written, id, meaning }));
  assert.equal(rows.length, DOCA_COUNTERS.length);
  for (const [k, c] of DOCA_COUNTERS.entries()) {
    const row = rows[k];
    assert.equal(row.written.replace(/\{.*/, ""), c.name);
    assert.equal(row.meaning, c.meaning);
    const example = row.written.replace("port=N", "port=0").replace(
      "priority=P",
      "priority=3",
    );
    assert.deepEqual(docaDataId(example), { ok: true, dataId: row.id }, c.name);
  }
});
