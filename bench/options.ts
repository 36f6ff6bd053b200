/**
 * The benches' whole-number options, checked one way.
 *
 * @module
 */

/**
 * `values[name]` (as `parseArgs` gives it) as an integer of at least
 * `min`; throws a RangeError naming the option otherwise.
 */
export function integerOption(
  values: Readonly<Record<string, unknown>>,
  name: string,
  min: number,
): number {
  const n = Number(values[name]);
  if (!Number.isSafeInteger(n) || n < min) {
    throw new RangeError(
      `--${name} must be an integer of at least ${min}, got "${values[name]}"`,
    );
  }
  return n;
}
