/**
 * The package's release, from deploy/deb/changelog (Debian's changelog
 * format, newest entry first): its version, who made it and when. The date
 * is the build's SOURCE_DATE_EPOCH, as dpkg-buildpackage takes it from
 * debian/changelog: every file in the package carries it, so that the same
 * sources build the same bytes.
 *
 * @module
 */

/** The newest entry of a changelog. */
export interface Release {
  /** The package version, e.g. `0.1.0`. */
  readonly version: string;
  /** The trailer's maintainer, `Name <address>`. */
  readonly maintainer: string;
  /** The trailer's date, in seconds since the epoch. */
  readonly epochSeconds: number;
}

const HEADING = /^dpu-traceback \(([^)\s]+)\) [a-z-]+; urgency=[a-z]+$/;
const TRAILER = /^ -- (.+ <[^>]+>) {2}(\S.*)$/;

/**
 * The newest entry of changelog `text`; throws, naming the line, where the
 * text is not a changelog whose first entry is complete.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { newestRelease } from "./changelog.ts";
 *
 * const release = newestRelease(
 *   "dpu-traceback (1.2.0) unstable; urgency=medium\n\n  * A change.\n\n" +
 *     " -- A Maintainer <a@example.org>  Thu, 01 Jan 2026 00:00:00 +0000\n",
 * );
 * assert.equal(release.version, "1.2.0");
 * assert.equal(release.maintainer, "A Maintainer <a@example.org>");
 * assert.equal(release.epochSeconds, 1767225600);
 * ```
 */
export function newestRelease(text: string): Release {
  const lines = text.split("\n");
  const heading = HEADING.exec(lines[0]);
  if (!heading) {
    throw new Error(
      `changelog line 1 must read "dpu-traceback (VERSION) DISTRIBUTION; urgency=LEVEL", got ${
        JSON.stringify(lines[0])
      }`,
    );
  }
  const at = lines.findIndex((line) => line.startsWith(" -- "));
  const trailer = at < 0 ? null : TRAILER.exec(lines[at]);
  if (!trailer) {
    throw new Error(
      at < 0
        ? "changelog: the first entry has no ' -- NAME <ADDRESS>  DATE' line"
        : `changelog line ${at + 1} must read " -- NAME <ADDRESS>  DATE", got ${
          JSON.stringify(lines[at])
        }`,
    );
  }
  const ms = Date.parse(trailer[2]);
  if (
    !/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d [+-]\d{4}$/.test(
      trailer[2],
    ) || Number.isNaN(ms)
  ) {
    throw new Error(
      `changelog line ${
        at + 1
      }: the date must be RFC 2822 ("Fri, 27 Nov 2026 18:00:00 +0000"), got ${
        JSON.stringify(trailer[2])
      }`,
    );
  }
  return {
    version: heading[1],
    maintainer: trailer[1],
    epochSeconds: ms / 1000,
  };
}
