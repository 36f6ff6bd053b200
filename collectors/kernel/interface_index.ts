/**
 * An interface's ifindex, and the interface that holds an ifindex now: how
 * the kernel source follows the interface it opened across a rename (`ip
 * link set b0 name b1`, udev naming a function after a reload). A rename
 * keeps the ifindex; an interface deleted and made again gets a new one.
 * Both read `/sys/class/net/*\/ifindex` of the calling process's network
 * namespace (under `root`, for tests); neither is on the per-sample path.
 *
 * @module
 */

import { join } from "node:path";
import { readSysfsDir, readSysfsText, type SysfsEntry } from "../sysfs.ts";

/** Where sysfs is looked for; tests give a fixture tree instead of `/`. */
export interface InterfaceIndexOptions {
  /** The root of the tree holding `sys/` (default `/`). */
  readonly root?: string;
}

/**
 * The ifindex of interface `iface`, or undefined when there is no such
 * interface (or its `ifindex` file does not read as a number).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { interfaceIndex } from "./interface_index.ts";
 *
 * assert.equal(typeof interfaceIndex("lo"), "number");
 * assert.equal(interfaceIndex("no-such-if"), undefined);
 * ```
 */
export function interfaceIndex(
  iface: string,
  options: InterfaceIndexOptions = {},
): number | undefined {
  if (iface === "" || iface.includes("/") || iface === "." || iface === "..") {
    return undefined;
  }
  let text: string;
  try {
    text = readSysfsText(
      join(options.root ?? "/", "sys/class/net", iface, "ifindex"),
    );
  } catch {
    return undefined;
  }
  const value = text.trim();
  return /^\d+$/.test(value) ? Number(value) : undefined;
}

/**
 * The name of the interface whose ifindex is `ifindex` now, or undefined
 * when none has it (the interface is gone).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { interfaceIndex, interfaceWithIndex } from "./interface_index.ts";
 *
 * assert.equal(interfaceWithIndex(interfaceIndex("lo")!), "lo");
 * ```
 */
export function interfaceWithIndex(
  ifindex: number,
  options: InterfaceIndexOptions = {},
): string | undefined {
  let entries: SysfsEntry[];
  try {
    entries = readSysfsDir(join(options.root ?? "/", "sys/class/net"));
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (interfaceIndex(entry.name, options) === ifindex) return entry.name;
  }
  return undefined;
}
