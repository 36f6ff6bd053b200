/**
 * The DOCA source's sampling thread (a Worker, run by
 * {@linkcode DocaCollector.run} through collectors/sampler_thread.ts). The
 * main thread has opened, configured and started the device; this thread
 * loads the same libraries (the process already has them, so it shares
 * their state) and polls the started diag context by its address until
 * stopped. The main thread shuts the device down once this has ended.
 *
 * @module
 */

import { DocaPoller, type DocaSamplerPayload } from "./doca.ts";
import { serveSamplerThread } from "./sampler_thread.ts";
import { COMMON_SYMBOLS, TELEMETRY_SYMBOLS } from "../ffi/doca.ts";
import { errorMessage } from "../base/error_message.ts";

serveSamplerThread<DocaSamplerPayload>((start, thread) => {
  const load = <S extends Deno.ForeignLibraryInterface>(
    path: string,
    symbols: S,
  ) => {
    try {
      return Deno.dlopen(path, symbols);
    } catch (error) {
      throw new Error(
        `DOCA source ${start.deviceName}: cannot load ${path} on the sampler thread: ${
          errorMessage(error)
        }`,
      );
    }
  };
  const common = load(start.libraries[0], COMMON_SYMBOLS);
  let telemetry;
  try {
    telemetry = load(start.libraries[1], TELEMETRY_SYMBOLS);
  } catch (error) {
    common.close();
    throw error;
  }
  const poller = new DocaPoller({
    ...start, // the device's name, columns, period, ring and sample sizes
    common,
    telemetry,
    diag: Deno.UnsafePointer.create(start.diag),
    warn: (message) => thread.note("warn", message),
    onError: (name) => thread.note("error", name),
  });
  return Promise.resolve({
    pollStats: poller.pollStats,
    loop: (mailbox) =>
      poller.pollUntilStopped(
        mailbox,
        thread.clock,
        thread.stopped,
        thread.publish,
      ),
    close: () => {
      // Only this thread's references: the main thread's keep them loaded.
      telemetry.close();
      common.close();
    },
  });
});
