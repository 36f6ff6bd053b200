/**
 * A temporary directory that removes itself, with everything in it, when
 * the scope that holds it ends:
 *
 * ```ts ignore
 * await using dir = await tempDir("review_");
 * await Deno.writeTextFile(join(dir.path, "events.log"), text);
 * ```
 *
 * @module
 */

/** A temporary directory, removed recursively on `await using`'s exit. */
export interface TempDir extends AsyncDisposable {
  /** The directory's absolute path. */
  readonly path: string;
}

/** Makes a temporary directory (named `prefix` + random characters). */
export async function tempDir(prefix?: string): Promise<TempDir> {
  const path = await Deno.makeTempDir(
    prefix === undefined ? undefined : { prefix },
  );
  return {
    path,
    async [Symbol.asyncDispose]() {
      await Deno.remove(path, { recursive: true });
    },
  };
}
