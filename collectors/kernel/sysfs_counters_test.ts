import assert from "node:assert/strict";
import v8 from "node:v8";
import { fileURLToPath } from "node:url";
import {
  type CounterFile,
  CounterRead,
  ibPortCounterFiles,
  netdevCounterFiles,
  rdmaHwCounterFiles,
  rdmaHwCounterLifespanMs,
  SysfsCounterSet,
} from "./sysfs_counters.ts";

/** The fixture tree: mlx5's file names under sys/class/infiniband. */
const FIXTURE_ROOT = fileURLToPath(
  new URL("../../tests/fixtures/sysfs", import.meta.url),
);

/** The u64 at `out[at]`, `out[at + 1]` (tests may use BigInt). */
function u64(out: Uint32Array, at: number): bigint {
  return (BigInt(out[at + 1]) << 32n) | BigInt(out[at]);
}

/** A copy of the fixture tree in a temporary directory, for tests that change it. */
function fixtureCopy(): string {
  const dir = Deno.makeTempDirSync({ prefix: "sysfs-fixture-" });
  const copy = (from: string, to: string): void => {
    for (const entry of Deno.readDirSync(from)) {
      const src = `${from}/${entry.name}`;
      const dst = `${to}/${entry.name}`;
      if (entry.isDirectory) {
        Deno.mkdirSync(dst);
        copy(src, dst);
      } else Deno.copyFileSync(src, dst);
    }
  };
  copy(FIXTURE_ROOT, dir);
  return dir;
}

function names(files: readonly CounterFile[]): string[] {
  return files.map((file) => file.name);
}

Deno.test("discovery lists a port's hw_counters (not lifespan) and port counters, sorted, under root", () => {
  const options = { root: FIXTURE_ROOT };
  const hw = rdmaHwCounterFiles("mlx5_0", 1, options);
  assert.deepEqual(names(hw), [
    "local_ack_timeout_err",
    "np_cnp_sent",
    "np_ecn_marked_roce_packets",
    "out_of_sequence",
    "rp_cnp_handled",
  ]);
  assert.equal(
    hw[1].path,
    `${FIXTURE_ROOT}/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent`,
  );
  assert.equal(rdmaHwCounterLifespanMs("mlx5_0", 1, options), 10);
  assert.deepEqual(names(ibPortCounterFiles("mlx5_0", 1, options)), [
    "link_downed",
    "port_rcv_errors",
    "port_xmit_data",
    "port_xmit_wait",
    "symbol_error",
  ]);
  // A trailing slash on root changes nothing.
  assert.deepEqual(
    ibPortCounterFiles("mlx5_0", 1, { root: `${FIXTURE_ROOT}/` }),
    ibPortCounterFiles("mlx5_0", 1, options),
  );
});

Deno.test("discovery names what is missing and refuses names that are not one path component", () => {
  const options = { root: FIXTURE_ROOT };
  assert.throws(
    () => rdmaHwCounterFiles("mlx5_1", 1, options),
    /^Error: No hw_counters for mlx5_1 port 1: .*mlx5_1\/ports\/1\/hw_counters does not exist$/,
  );
  assert.throws(
    () => ibPortCounterFiles("mlx5_0", 2, options),
    /No port counters for mlx5_0 port 2/,
  );
  assert.throws(
    () => netdevCounterFiles("eth9", options),
    /^Error: No interface eth9: .*\/sys\/class\/net\/eth9\/statistics does not exist$/,
  );
  assert.throws(() => netdevCounterFiles("../x", options), /Invalid interface/);
  assert.throws(() => netdevCounterFiles("..", options), /Invalid interface/);
  assert.throws(() => netdevCounterFiles("", options), /Invalid interface/);
  assert.throws(() => rdmaHwCounterFiles("a/b", 1, options), /Invalid RDMA/);
  assert.throws(() => rdmaHwCounterFiles("x", -1, options), /Invalid port/);
});

Deno.test("values at and near 2^64-1, 2^53 and 2^32 read exactly", () => {
  const options = { root: FIXTURE_ROOT };
  const files = [
    ...rdmaHwCounterFiles("mlx5_0", 1, options),
    ...ibPortCounterFiles("mlx5_0", 1, options),
  ];
  using set = SysfsCounterSet.open(files);
  assert.equal(set.count, 10);
  const out = new Uint32Array(3 + 2 * set.count);
  assert.equal(set.readAll(out, 3), 0);
  const got = Object.fromEntries(
    files.map((file, k) => [file.name, u64(out, 3 + 2 * k)]),
  );
  assert.deepEqual(got, {
    local_ack_timeout_err: 42n,
    np_cnp_sent: 9007199254740993n, // 2^53 + 1: no double holds it
    np_ecn_marked_roce_packets: 18446744073709551615n, // 2^64 - 1
    out_of_sequence: 0n,
    rp_cnp_handled: 9007199254740992n, // 2^53
    link_downed: 1n,
    port_rcv_errors: 7n,
    port_xmit_data: 4294967296n, // 2^32: the carry into hi
    port_xmit_wait: 18446744073709551614n,
    symbol_error: 4294967295n,
  });
  assert.deepEqual([...set.status], new Array(10).fill(CounterRead.OK));
  assert.deepEqual([...out.subarray(0, 3)], [0, 0, 0], "words before `at`");
  // Read again in place: the same values (pread at offset 0, no seek).
  out.fill(0);
  assert.equal(set.readAll(out, 3), 0);
  assert.equal(u64(out, 3 + 2 * 2), 18446744073709551615n);
});

Deno.test("a malformed file is a read fault: the record keeps its value, the tally moves, one line says why", () => {
  const root = fixtureCopy();
  try {
    const files = rdmaHwCounterFiles("mlx5_0", 1, { root });
    const target = files.findIndex((f) => f.name === "np_cnp_sent");
    const path = files[target].path;
    using set = SysfsCounterSet.open(files);
    const out = new Uint32Array(2 * set.count);
    assert.equal(set.readAll(out, 0), 0);
    assert.equal(set.describeFault(target), "");
    const cases: [string, string][] = [
      ["", "the file is empty"],
      ["\n", '"\\n" is not a decimal number'],
      ["12a\n", '"12a\\n" is not a decimal number'],
      [" 5\n", '" 5\\n" is not a decimal number'],
      ["-1\n", '"-1\\n" is not a decimal number'],
      ["5\n\n", '"5\\n\\n" is not a decimal number'],
      ["0x10\n", '"0x10\\n" is not a decimal number'],
      ["18446744073709551616\n", '"18446744073709551616\\n" is above 2^64-1'],
      ["99999999999999999999\n", '"99999999999999999999\\n" is above 2^64-1'],
      ["1".repeat(40), "32 bytes or more"],
    ];
    let tally = 0;
    for (const [content, why] of cases) {
      Deno.writeTextFileSync(path, content);
      assert.equal(set.readAll(out, 0), 1, JSON.stringify(content));
      tally++;
      assert.equal(set.status[target], CounterRead.MALFORMED);
      assert.equal(set.malformedReads[target], tally);
      assert.equal(set.failedReads[target], 0);
      assert.equal(u64(out, 2 * target), 9007199254740993n, "value kept");
      assert.equal(set.describeFault(target), `${path}: not a counter: ${why}`);
    }
    // The other counters went on being read.
    assert.equal(set.status[target - 1], CounterRead.OK);
    assert.equal(set.malformedReads[target - 1], 0);
    // A counter without its newline is still a counter; so is the largest.
    Deno.writeTextFileSync(path, "18446744073709551615");
    assert.equal(set.readOne(target, out, 2 * target), CounterRead.OK);
    assert.equal(u64(out, 2 * target), 18446744073709551615n);
    assert.equal(set.describeFault(target), "");
    assert.equal(set.malformedReads[target], tally, "the tally stays");
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("a file removed between reads: a disk file keeps its last content, a /proc file whose process is gone fails with ESRCH", async () => {
  // On sysfs an attribute whose device is deleted fails with ENODEV (the
  // netns test deletes a veth pair under the reader). A fixture file on a
  // disk filesystem cannot do that: the open descriptor keeps the inode.
  const root = fixtureCopy();
  try {
    const files = ibPortCounterFiles("mlx5_0", 1, { root });
    using set = SysfsCounterSet.open(files);
    const out = new Uint32Array(2 * set.count);
    Deno.removeSync(files[0].path);
    assert.equal(set.readAll(out, 0), 0);
    assert.equal(u64(out, 0), 1n);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
  // A procfs file is, like sysfs, generated on each read; once its
  // process is reaped the open descriptor fails.
  const child = new Deno.Command("sleep", { args: ["60"] }).spawn();
  let set: SysfsCounterSet | undefined;
  try {
    const path = `/proc/${child.pid}/oom_score_adj`;
    set = SysfsCounterSet.open([{ name: "oom_score_adj", path }]);
    const out = new Uint32Array([7, 7]);
    assert.equal(set.readAll(out, 0), 0);
    assert.deepEqual([...out], [0, 0]);
    child.kill("SIGKILL");
    await child.status;
    out.set([7, 7]);
    assert.equal(set.readAll(out, 0), 1);
    assert.equal(set.status[0], CounterRead.FAILED);
    assert.equal(set.errno[0], 3); // ESRCH
    assert.equal(set.failedReads[0], 1);
    assert.deepEqual([...out], [7, 7], "the record keeps its value");
    assert.equal(set.describeFault(0), `${path}: read failed: ESRCH`);
    assert.equal(set.readAll(out, 0), 1);
    assert.equal(set.failedReads[0], 2);
  } finally {
    set?.close();
    try {
      child.kill("SIGKILL");
      await child.status;
    } catch {
      // already gone
    }
  }
});

/** The descriptors this process has open. */
function openDescriptors(): number {
  return [...Deno.readDirSync("/proc/self/fd")].length;
}

Deno.test("only regular files are opened; a refusal names the path and closes what was opened", () => {
  const dir = Deno.makeTempDirSync({ prefix: "sysfs-kinds-" });
  try {
    const good = `${dir}/good`;
    Deno.writeTextFileSync(good, "1\n");
    const fifo = `${dir}/fifo`;
    const made = new Deno.Command("mkfifo", { args: [fifo] }).outputSync();
    assert.equal(made.code, 0);
    const before = openDescriptors();
    // A FIFO with no writer: O_NONBLOCK keeps the open from waiting.
    assert.throws(
      () =>
        SysfsCounterSet.open([
          { name: "good", path: good },
          { name: "fifo", path: fifo },
        ]),
      {
        message:
          `Cannot read counters from ${fifo}: is a FIFO, not a regular file`,
      },
    );
    assert.throws(
      () => SysfsCounterSet.open([{ name: "d", path: dir }]),
      {
        message:
          `Cannot read counters from ${dir}: is a directory, not a regular file`,
      },
    );
    assert.throws(
      () => SysfsCounterSet.open([{ name: "null", path: "/dev/null" }]),
      /is a character device, not a regular file/,
    );
    assert.throws(
      () => SysfsCounterSet.open([{ name: "gone", path: `${dir}/gone` }]),
      { message: `Cannot open ${dir}/gone: ENOENT` },
    );
    assert.equal(openDescriptors(), before, "descriptors left open");
    const set = SysfsCounterSet.open([{ name: "good", path: good }]);
    assert.equal(openDescriptors(), before + 1);
    set.close();
    set.close();
    assert.equal(openDescriptors(), before);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

const gc = (globalThis as { gc?: () => void }).gc;

Deno.test({
  name:
    "reading allocates nothing: 10 files, one of them malformed, read 900,000 times in all (needs --v8-flags=--expose-gc)",
  ignore: typeof gc !== "function",
  fn() {
    const root = fixtureCopy();
    try {
      const options = { root };
      const files = [
        ...rdmaHwCounterFiles("mlx5_0", 1, options),
        ...ibPortCounterFiles("mlx5_0", 1, options),
      ];
      Deno.writeTextFileSync(files[9].path, "12a\n"); // faults every read
      using set = SysfsCounterSet.open(files);
      const out = new Uint32Array(2 * set.count);
      // Bytes V8 has allocated so far, where this Deno reports it.
      const allocated = (): number | undefined =>
        (v8.getHeapStatistics() as { total_allocated_bytes?: number })
          .total_allocated_bytes;
      let faults = 0;
      const run = (rounds: number): void => {
        for (let i = 0; i < rounds; i++) faults += set.readAll(out, 0);
      };
      // What a run allocates, from a collected heap.
      const allocatedBy = (rounds: number): number | undefined => {
        gc!();
        gc!();
        const before = allocated();
        run(rounds);
        const after = allocated();
        return before === undefined || after === undefined
          ? undefined
          : after - before;
      };
      run(20_000); // warm up the JIT
      gc!();
      gc!();
      const heapBefore = Deno.memoryUsage().heapUsed;
      // V8's own bookkeeping moves the allocation counter by up to ~1.5 MB
      // around any loop, even an empty one; what grows with the number of
      // reads is the difference between a long run and a short one.
      const short = allocatedBy(10_000);
      const long = allocatedBy(60_000);
      gc!();
      gc!();
      const heapAfter = Deno.memoryUsage().heapUsed;
      assert.equal(faults, 90_000); // 20,000 + 10,000 + 60,000 rounds
      assert.equal(set.malformedReads[9], 90_000);
      assert.equal(u64(out, 4), 18446744073709551615n);
      assert.ok(
        heapAfter - heapBefore < 256 * 1024,
        `heap grew by ${heapAfter - heapBefore} bytes over 700,000 reads`,
      );
      if (short !== undefined && long !== undefined) {
        // 500,000 more reads: one 16-byte object each would be 8 MB.
        assert.ok(
          long - short < 2 * 1024 * 1024,
          `500,000 more reads allocated ${
            long - short
          } bytes more (${short} for 100,000 reads, ${long} for 600,000)`,
        );
      }
    } finally {
      Deno.removeSync(root, { recursive: true });
    }
  },
});
