import assert from "node:assert/strict";
import {
  decodePciInfo,
  FIELD_VALUE_BYTES,
  MEMORY_V2_VERSION,
  normalizePciBusId,
  NVML_SYMBOLS,
  NvmlReturn,
  nvmlReturnName,
  PCI_INFO_BYTES,
  readFieldValue,
  TEMPERATURE_V1_VERSION,
  ValueType,
} from "./nvml.ts";

Deno.test("nvmlReturnName: names from the header, unknown codes by number", () => {
  assert.equal(nvmlReturnName(0), "NVML_SUCCESS");
  assert.equal(nvmlReturnName(3), "NVML_ERROR_NOT_SUPPORTED");
  assert.equal(nvmlReturnName(9), "NVML_ERROR_DRIVER_NOT_LOADED");
  assert.equal(nvmlReturnName(15), "NVML_ERROR_GPU_IS_LOST");
  assert.equal(nvmlReturnName(25), "NVML_ERROR_ARGUMENT_VERSION_MISMATCH");
  assert.equal(nvmlReturnName(30), "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED");
  assert.equal(nvmlReturnName(999), "NVML_ERROR_UNKNOWN");
  assert.equal(nvmlReturnName(77), "NVML_ERROR_77");
});

Deno.test("struct version words are size | version << 24", () => {
  assert.equal(MEMORY_V2_VERSION, 0x02000028);
  assert.equal(TEMPERATURE_V1_VERSION, 0x0100000c);
});

Deno.test("symbols: versioned names only, newer ones optional", () => {
  const names = Object.keys(NVML_SYMBOLS);
  for (
    const name of [
      "nvmlInit_v2",
      "nvmlDeviceGetCount_v2",
      "nvmlDeviceGetHandleByIndex_v2",
      "nvmlDeviceGetPciInfo_v3",
      "nvmlEventSetWait_v2",
    ]
  ) {
    assert.ok(names.includes(name), name);
  }
  for (
    const bare of [
      "nvmlInit",
      "nvmlDeviceGetCount",
      "nvmlDeviceGetPciInfo",
      "nvmlEventSetWait",
    ]
  ) {
    assert.ok(!names.includes(bare), bare);
  }
  const optional = Object.entries(NVML_SYMBOLS)
    .filter(([, s]) => "optional" in s && s.optional)
    .map(([n]) => n)
    .sort();
  // Each reading has a newer and an older call; either may be missing.
  assert.deepEqual(optional, [
    "nvmlDeviceGetCurrentClocksEventReasons",
    "nvmlDeviceGetCurrentClocksThrottleReasons",
    "nvmlDeviceGetMemoryInfo_v2",
    "nvmlDeviceGetTemperature",
    "nvmlDeviceGetTemperatureV",
  ]);
});

Deno.test("decodePciInfo reads the 68-byte nvmlPciInfo_t at its offsets", () => {
  const raw = new Uint8Array(PCI_INFO_BYTES);
  const view = new DataView(raw.buffer);
  raw.set(new TextEncoder().encode("0000:3A:00.0\0"), 0);
  view.setUint32(16, 0, true);
  view.setUint32(20, 0x3a, true);
  view.setUint32(24, 0, true);
  view.setUint32(28, 0x233010de, true);
  view.setUint32(32, 0x16c110de, true);
  raw.set(new TextEncoder().encode("00000000:3A:00.0\0"), 36);
  assert.deepEqual(decodePciInfo(raw), {
    busId: "00000000:3A:00.0",
    domain: 0,
    bus: 0x3a,
    device: 0,
    pciDeviceId: 0x233010de,
  });
});

Deno.test("normalizePciBusId: NVML's 8-digit upper case to DOCA's form", () => {
  assert.equal(normalizePciBusId("00000000:3A:00.0"), "0000:3a:00.0");
  assert.equal(normalizePciBusId("00000001:C1:1F.7"), "0001:c1:1f.7");
  assert.equal(normalizePciBusId("0000:18:00.0"), "0000:18:00.0");
  assert.equal(normalizePciBusId("00010000:18:00.0"), "10000:18:00.0");
  assert.equal(normalizePciBusId("garbage"), "garbage");
});

/** A field value array with one entry of `type` holding `fill(view, at)`. */
function entry(
  type: number,
  status: number,
  fill: (view: DataView, at: number) => void,
): DataView {
  const view = new DataView(new ArrayBuffer(2 * FIELD_VALUE_BYTES));
  // Entry 1, so the stride is exercised.
  const base = FIELD_VALUE_BYTES;
  view.setInt32(base + 24, type, true);
  view.setInt32(base + 28, status, true);
  fill(view, base + 32);
  return view;
}

Deno.test("readFieldValue picks the union member by valueType, exactly", () => {
  const out = new Uint32Array(4).fill(7);
  const cases: [number, (v: DataView, at: number) => void, [number, number]][] =
    [
      [ValueType.UNSIGNED_INT, (v, at) => v.setUint32(at, 0xfffffffe, true), [
        0xfffffffe,
        0,
      ]],
      [ValueType.UNSIGNED_SHORT, (v, at) => v.setUint16(at, 65535, true), [
        65535,
        0,
      ]],
      [ValueType.SIGNED_INT, (v, at) => v.setInt32(at, -5, true), [0, 0]],
      [ValueType.SIGNED_INT, (v, at) => v.setInt32(at, 12, true), [12, 0]],
      [
        ValueType.UNSIGNED_LONG_LONG,
        (v, at) => v.setBigUint64(at, 0xfedcba9876543210n, true),
        [0x76543210, 0xfedcba98],
      ],
      [
        ValueType.UNSIGNED_LONG,
        (v, at) => v.setBigUint64(at, 1n << 40n, true),
        [0, 256],
      ],
      [ValueType.SIGNED_LONG_LONG, (v, at) => v.setBigInt64(at, -1n, true), [
        0,
        0,
      ]],
      [
        ValueType.SIGNED_LONG_LONG,
        (v, at) => v.setBigInt64(at, (1n << 62n) + 3n, true),
        [3, 0x40000000],
      ],
      [ValueType.DOUBLE, (v, at) => v.setFloat64(at, 4294967297.75, true), [
        1,
        1,
      ]],
      [ValueType.DOUBLE, (v, at) => v.setFloat64(at, -2, true), [0, 0]],
    ];
  for (const [type, fill, [lo, hi]] of cases) {
    out.fill(7);
    assert.equal(
      readFieldValue(entry(type, 0, fill), 1, out, 2),
      NvmlReturn.SUCCESS,
    );
    assert.deepEqual([...out], [7, 7, lo, hi], `type ${type}`);
  }
});

Deno.test("readFieldValue returns the entry's own code and leaves out untouched", () => {
  const out = new Uint32Array(2).fill(9);
  const view = entry(
    ValueType.UNSIGNED_INT,
    NvmlReturn.NOT_SUPPORTED,
    (v, at) => v.setUint32(at, 5, true),
  );
  assert.equal(readFieldValue(view, 1, out, 0), NvmlReturn.NOT_SUPPORTED);
  assert.deepEqual([...out], [9, 9]);
  const odd = entry(42, 0, () => {});
  assert.equal(readFieldValue(odd, 1, out, 0), NvmlReturn.UNKNOWN);
  assert.deepEqual([...out], [9, 9]);
});
