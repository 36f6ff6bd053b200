/**
 * Opening NVML and listing its GPUs: loads `libnvidia-ml.so.1`,
 * initializes it, and names each GPU (index, UUID, PCI bus id, model).
 * A host with no library, no driver loaded or no GPU is told so as `info`;
 * an NVML that is there but does not work is a `warning`. A GPU that
 * cannot be opened is left out with a line, so that it cannot keep the
 * others from being read.
 *
 * Initializing NVML and looking up handles can block (they wake GPUs), so
 * this runs on the poller's Worker like every other NVML call.
 *
 * @module
 */

import { errorMessage } from "../../base/error_message.ts";
import {
  cStringFromBuffer,
  libraryPaths,
  openFirst,
} from "../../ffi/library.ts";
import {
  decodePciInfo,
  DRIVER_VERSION_BUFFER_SIZE,
  NAME_BUFFER_SIZE,
  normalizePciBusId,
  NVML_SONAME,
  NVML_SYMBOLS,
  nvmlErrorString,
  NvmlReturn,
  nvmlReturnName,
  type NvmlSymbols,
  PCI_INFO_BYTES,
  UUID_BUFFER_SIZE,
} from "../../ffi/nvml.ts";

/** One GPU as NVML names it. */
export interface GpuInfo {
  /** NVML's index (the `N` of `gpuN.` column names). */
  readonly index: number;
  /** The GPU's UUID (`GPU-...`), stable across reboots and re-indexing. */
  readonly uuid: string;
  /** `0000:18:00.0`, as DOCA and lspci write it. */
  readonly pciBusId: string;
  /** The product name (`NVIDIA H100 80GB HBM3`). */
  readonly name: string;
}

/** What opening NVML found. */
export type NvmlOpenResult =
  | {
    readonly ok: true;
    readonly library: string;
    readonly driverVersion: string;
    readonly gpus: readonly GpuInfo[];
    /** GPUs that were counted but could not be opened, one line each. */
    readonly skipped: readonly string[];
  }
  | {
    readonly ok: false;
    /**
     * `info` when there is simply no NVML here (no library, no driver
     * loaded, no GPU); `warning` when there is one that does not work.
     */
    readonly level: "info" | "warning";
    readonly reason: string;
  };

/** An opened GPU's device pointer. */
export interface GpuHandle {
  readonly handle: Deno.PointerValue;
  /** The pointer's low and high words, to match event data without BigInt. */
  readonly lo: number;
  readonly hi: number;
}

/** NVML loaded and initialized, with the GPUs it could open. */
export interface OpenedNvml {
  readonly library: Deno.DynamicLibrary<typeof NVML_SYMBOLS>;
  readonly result: NvmlOpenResult & { ok: true };
  /** The handle of each GPU in `result.gpus`, by index. */
  readonly handles: Map<number, GpuHandle>;
}

/**
 * Loads `libnvidia-ml.so.1` from the first of `dirs` that has it,
 * initializes NVML and lists the GPUs. Never throws for a host without
 * NVML or GPUs: `opened` is then absent and `result` says why. `result`
 * is `opened.result` when NVML opened.
 */
export function openNvml(
  dirs: readonly string[],
): { opened?: OpenedNvml; result: NvmlOpenResult } {
  const paths = libraryPaths(NVML_SONAME.replace(/\.so\.1$/, ""), dirs, [
    ".so.1",
  ]);
  let opened;
  try {
    opened = openFirst(paths, NVML_SYMBOLS);
  } catch (error) {
    return {
      result: { ok: false, level: "warning", reason: errorMessage(error) },
    };
  }
  if (opened === null) {
    return {
      result: {
        ok: false,
        level: "info",
        reason: `no NVML (${NVML_SONAME} not found in ${dirs.join(", ")})`,
      },
    };
  }
  const { library, path } = opened;
  const nvml = library.symbols;
  const init = nvml.nvmlInit_v2();
  if (init !== NvmlReturn.SUCCESS) {
    const reason = `NVML did not initialize: ${nvmlReturnName(init)} (${
      nvmlErrorString(nvml, init)
    }) from ${path}`;
    library.close();
    return {
      result: {
        ok: false,
        level: init === NvmlReturn.DRIVER_NOT_LOADED ? "info" : "warning",
        reason,
      },
    };
  }
  const close = () => {
    nvml.nvmlShutdown();
    library.close();
  };
  try {
    const driver = new Uint8Array(DRIVER_VERSION_BUFFER_SIZE);
    const driverVersion =
      nvml.nvmlSystemGetDriverVersion(driver, driver.length) ===
          NvmlReturn.SUCCESS
        ? cStringFromBuffer(driver)
        : "unknown";
    const count = new Uint32Array(1);
    const counted = nvml.nvmlDeviceGetCount_v2(count);
    if (counted !== NvmlReturn.SUCCESS) {
      close();
      return {
        result: {
          ok: false,
          level: "warning",
          reason: `NVML cannot count GPUs: ${nvmlReturnName(counted)} (${
            nvmlErrorString(nvml, counted)
          })`,
        },
      };
    }
    const gpus: GpuInfo[] = [];
    const skipped: string[] = [];
    const handles = new Map<number, GpuHandle>();
    const cell = new BigUint64Array(1);
    const words = new Uint32Array(cell.buffer);
    for (let index = 0; index < count[0]; index++) {
      const got = nvml.nvmlDeviceGetHandleByIndex_v2(index, cell);
      if (got !== NvmlReturn.SUCCESS) {
        skipped.push(
          `gpu${index}: cannot be opened: ${nvmlReturnName(got)} (${
            nvmlErrorString(nvml, got)
          }); left out`,
        );
        continue;
      }
      const handle = Deno.UnsafePointer.create(cell[0]);
      const info = describeGpu(nvml, handle, index);
      if (typeof info === "string") {
        skipped.push(info);
        continue;
      }
      gpus.push(info);
      handles.set(index, { handle, lo: words[0], hi: words[1] });
    }
    if (gpus.length === 0) {
      close();
      return {
        result: {
          ok: false,
          level: skipped.length === 0 ? "info" : "warning",
          reason: skipped.length === 0
            ? `NVML (driver ${driverVersion}) found no GPU`
            : `NVML found no GPU it could open: ${skipped.join("; ")}`,
        },
      };
    }
    const result = {
      ok: true as const,
      library: path,
      driverVersion,
      gpus,
      skipped,
    };
    return { opened: { library, result, handles }, result };
  } catch (error) {
    close();
    throw error;
  }
}

/**
 * How notes name a GPU: its index as in column names, with the bus id and
 * UUID that identify the card itself.
 */
export function gpuLabel(gpu: GpuInfo): string {
  return `gpu${gpu.index} (${gpu.pciBusId}, ${gpu.uuid})`;
}

/** Identity of one GPU, or a line saying why it is left out. */
function describeGpu(
  nvml: NvmlSymbols,
  handle: Deno.PointerValue,
  index: number,
): GpuInfo | string {
  const name = new Uint8Array(NAME_BUFFER_SIZE);
  const uuid = new Uint8Array(UUID_BUFFER_SIZE);
  const pci = new Uint8Array(PCI_INFO_BYTES);
  for (
    const [call, code] of [
      ["nvmlDeviceGetName", nvml.nvmlDeviceGetName(handle, name, name.length)],
      ["nvmlDeviceGetUUID", nvml.nvmlDeviceGetUUID(handle, uuid, uuid.length)],
      ["nvmlDeviceGetPciInfo_v3", nvml.nvmlDeviceGetPciInfo_v3(handle, pci)],
    ] as const
  ) {
    if (code !== NvmlReturn.SUCCESS) {
      return `gpu${index}: ${call}: ${nvmlReturnName(code)} (${
        nvmlErrorString(nvml, code)
      }); left out`;
    }
  }
  return {
    index,
    uuid: cStringFromBuffer(uuid),
    pciBusId: normalizePciBusId(decodePciInfo(pci).busId),
    name: cStringFromBuffer(name),
  };
}
