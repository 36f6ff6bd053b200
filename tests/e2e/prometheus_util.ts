/**
 * Starting Debian's `prometheus` for the end-to-end tests.
 *
 * @module
 */

/**
 * Starts Prometheus on `127.0.0.1:port` with `dir/prometheus.yml` and its
 * data under `dir/tsdb`, quiet; a missing binary is an Error saying how to
 * install it (`needs`). The caller waits for it to be ready and kills it.
 */
export function startPrometheus(
  dir: string,
  port: number,
  needs: string,
): Deno.ChildProcess {
  try {
    return new Deno.Command("prometheus", {
      args: [
        `--config.file=${dir}/prometheus.yml`,
        `--storage.tsdb.path=${dir}/tsdb`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--log.level=warn",
      ],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new Error(`prometheus is not on PATH; ${needs}`);
    }
    throw error;
  }
}
