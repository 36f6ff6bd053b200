/**
 * Module worker that owns NVML for the GPU monitor (see
 * collectors/nvml/collector.ts for the host side). Every NVML call can
 * block, so none is made on the main thread, where the NIC is polled and
 * the metrics are served.
 *
 * Protocol: the host posts {@linkcode NvmlRequest}s in the order
 * `open`, `start`, `stop`; the worker answers `open` with `opened` or
 * `unavailable`, sends `note`s while polling, and answers `stop` with
 * `closed`. Records travel through a {@linkcode GpuMailbox}.
 *
 * @module
 */

import { errorMessage } from "../../base/error_message.ts";
import type { GpuInfo } from "./gpu_list.ts";
import { GpuMailbox } from "./mailbox.ts";
import type { PollerNote } from "./notes.ts";
import { NvmlPoller } from "./poller.ts";
import type { GpuColumn } from "./readings.ts";

/** What the host asks. */
export type NvmlRequest =
  | { readonly kind: "open"; readonly libDirs: readonly string[] }
  | {
    readonly kind: "start";
    readonly columns: readonly GpuColumn[];
    readonly periodMs: number;
    readonly mailbox: SharedArrayBuffer;
  }
  | { readonly kind: "stop" };

/** What the worker answers. */
export type NvmlReply =
  | {
    readonly kind: "opened";
    readonly library: string;
    readonly driverVersion: string;
    readonly gpus: readonly GpuInfo[];
    readonly skipped: readonly string[];
  }
  | {
    readonly kind: "unavailable";
    readonly level: "info" | "warning";
    readonly reason: string;
  }
  | { readonly kind: "note"; readonly note: PollerNote }
  | { readonly kind: "closed"; readonly problems: readonly string[] }
  | { readonly kind: "failed"; readonly message: string };

const scope = self as unknown as {
  onmessage: ((event: MessageEvent<NvmlRequest>) => void) | null;
  postMessage(message: NvmlReply): void;
};

let poller: NvmlPoller | undefined;
let timer: ReturnType<typeof setTimeout> | undefined;

function reply(message: NvmlReply): void {
  scope.postMessage(message);
}

function start(
  p: NvmlPoller,
  request: NvmlRequest & { kind: "start" },
): void {
  const mailbox = new GpuMailbox(
    2 * (1 + request.columns.length),
    request.mailbox,
  );
  p.share({
    errors: mailbox.errors,
    gpuUp: mailbox.gpuUp,
    busy: mailbox.control.subarray(1, 2),
  });
  p.start(request.columns);
  const record = new Uint32Array(p.recordWords);
  const period = request.periodMs;
  let due = performance.now();
  // How far past its due time the previous poll ran, carried into the next.
  let overrun = 0;
  const tick = () => {
    const now = performance.now();
    const late = now - due + overrun;
    p.poll(record, performance.timeOrigin + now);
    mailbox.publish(record, late);
    const notes = p.takeNotes();
    for (let i = 0; i < notes.length; i++) {
      reply({ kind: "note", note: notes[i] });
    }
    // A poll that overran its period is not made up for with a burst: the
    // next one runs at once and counts as late by the overrun.
    const next = due + period;
    const after = performance.now();
    overrun = next < after ? after - next : 0;
    due = next < after ? after : next;
    timer = setTimeout(tick, due - after);
  };
  for (const note of p.takeNotes()) reply({ kind: "note", note });
  tick();
}

scope.onmessage = (event) => {
  const request = event.data;
  try {
    switch (request.kind) {
      case "open": {
        const opened = NvmlPoller.open(request.libDirs);
        poller = opened.poller;
        if (opened.result.ok) {
          const { library, driverVersion, gpus, skipped } = opened.result;
          reply({ kind: "opened", library, driverVersion, gpus, skipped });
        } else {
          reply({
            kind: "unavailable",
            level: opened.result.level,
            reason: opened.result.reason,
          });
        }
        return;
      }
      case "start":
        if (poller === undefined) throw new Error("start before open");
        start(poller, request);
        return;
      case "stop": {
        if (timer !== undefined) clearTimeout(timer);
        timer = undefined;
        const problems = poller?.close() ?? [];
        poller = undefined;
        reply({ kind: "closed", problems });
        return;
      }
    }
  } catch (error) {
    reply({
      kind: "failed",
      message: errorMessage(error),
    });
  }
};
