import assert from "node:assert/strict";
import {
  NVML_SIM_DEVICE_NAME,
  NVML_SIM_DRIVER_VERSION,
  nvmlSimIdentity,
} from "../../tests/fixtures/libnvml_sim/build.ts";
import { NvmlPoller } from "./poller.ts";
import { open, withSim } from "./poller_test_util.ts";
import { tempDir } from "../../tests/temp_dir.ts";

Deno.test("NvmlPoller lists every GPU with its identity and the driver version", async () => {
  await withSim({ NVML_SIM_GPUS: "3" }, ({ dir }) => {
    const poller = open(dir);
    try {
      assert.equal(poller.result.driverVersion, NVML_SIM_DRIVER_VERSION);
      assert.equal(poller.result.library, `${dir}/libnvidia-ml.so.1`);
      assert.deepEqual(
        poller.result.gpus,
        [0, 1, 2].map((g) => {
          const id = nvmlSimIdentity(g);
          return {
            index: g,
            uuid: id.uuid,
            pciBusId: id.busIdLegacy.toLowerCase(),
            name: NVML_SIM_DEVICE_NAME,
          };
        }),
      );
    } finally {
      assert.deepEqual(poller.close(), []);
    }
  });
});

Deno.test("NvmlPoller: a GPU it may not open is left out with a line; the rest are read", async () => {
  await withSim(
    { NVML_SIM_GPUS: "3", NVML_SIM_NO_PERMISSION: "0" },
    ({ dir }) => {
      const poller = open(dir);
      try {
        assert.deepEqual(poller.result.gpus.map((g) => g.index), [1, 2]);
        assert.deepEqual(poller.result.skipped, [
          "gpu0: cannot be opened: NVML_ERROR_NO_PERMISSION (Insufficient Permissions); left out",
        ]);
      } finally {
        poller.close();
      }
    },
  );
});

Deno.test("NvmlPoller.open: no library, no driver and no GPU are info, not errors", async () => {
  const missing = NvmlPoller.open(["/nonexistent-nvml-dir"]);
  assert.equal(missing.poller, undefined);
  assert.deepEqual(missing.result, {
    ok: false,
    level: "info",
    reason: "no NVML (libnvidia-ml.so.1 not found in /nonexistent-nvml-dir)",
  });
  await withSim({ NVML_SIM_INIT_RETURN: "9" }, ({ dir }) => {
    const opened = NvmlPoller.open([dir]);
    assert.equal(opened.poller, undefined);
    assert.equal(opened.result.ok, false);
    assert.equal(opened.result.ok === false && opened.result.level, "info");
    assert.match(
      opened.result.ok === false ? opened.result.reason : "",
      /^NVML did not initialize: NVML_ERROR_DRIVER_NOT_LOADED \(.+\) from /,
    );
  });
  await withSim({ NVML_SIM_GPUS: "0" }, ({ dir }) => {
    const opened = NvmlPoller.open([dir]);
    assert.deepEqual(opened.result, {
      ok: false,
      level: "info",
      reason: `NVML (driver ${NVML_SIM_DRIVER_VERSION}) found no GPU`,
    });
  });
  await withSim({ NVML_SIM_INIT_RETURN: "18" }, ({ dir }) => {
    const opened = NvmlPoller.open([dir]);
    assert.equal(opened.result.ok === false && opened.result.level, "warning");
  });
});

Deno.test("NvmlPoller: a file that is not a usable library is a warning naming it", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(`${dir.path}/libnvidia-ml.so.1`, "not an ELF file");
  const opened = NvmlPoller.open([dir.path]);
  assert.equal(opened.poller, undefined);
  assert.equal(opened.result.ok === false && opened.result.level, "warning");
  assert.match(
    opened.result.ok === false ? opened.result.reason : "",
    new RegExp(`^Cannot load ${dir.path}/libnvidia-ml\\.so\\.1: `),
  );
});
