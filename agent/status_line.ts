/**
 * The live one-line status an operator sees on a terminal while the agent
 * runs: samples per second, active rules and events, per monitor.
 *
 * @module
 */

import type { Monitor } from "../rules/monitor.ts";

/**
 * Redraws one status line on `write` every second until stopped; stopping
 * clears it, so the closing table starts on a clean line.
 *
 * @example
 * ```ts ignore
 * const status = startStatusLine(agent.monitors.map((m) => m.monitor), (text) => Deno.stderr.writeSync(encoder.encode(text)));
 * await agent.run(signal);
 * status.stop();
 * ```
 */
export function startStatusLine(
  monitors: readonly Monitor[],
  write: (text: string) => void,
): { stop(): void } {
  const started = performance.now();
  let lastTime = started;
  let lastSamples = monitors.map((m) => m.samples);
  const draw = () => {
    const now = performance.now();
    const parts = monitors.map((m, i) => {
      const rate = (m.samples - lastSamples[i]) / ((now - lastTime) / 1000);
      return `${m.name}: ${
        Math.round(rate)
      } samples/s, ${m.activeRules} active, ${m.events} events`;
    });
    lastTime = now;
    lastSamples = monitors.map((m) => m.samples);
    const line = `${((now - started) / 1000).toFixed(0).padStart(4)} s  ${
      parts.join(" | ")
    }`;
    write(`\r\x1b[2K${line}`);
  };
  const timer = setInterval(draw, 1000);
  return {
    stop() {
      clearInterval(timer);
      write("\r\x1b[2K");
    },
  };
}
