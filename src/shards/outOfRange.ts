/**
 * The failure of a read outside one of the index's typed arrays. A typed array answers `undefined` for
 * an index it does not have (negative, past the end, fractional, NaN); the reads in src/shards say
 * `array[i] ?? outOfRange(array, i, "array")`, so a wrong index throws, naming the array, where a
 * `?? 0` would have read row 0 and turned a wrong row into a plausible answer.
 *
 * Written at each read rather than wrapped in an accessor function, because that costs nothing: the
 * JIT profiles each read where it is written, sees it always in bounds and always a number, and
 * compiles it as a plain load with the `??` folded away (the call on its right never runs, so it never
 * shapes the code around it). One accessor shared by every read instead shares one profile among
 * arrays of every element type, integer and double results alike, which slows matching and, more so,
 * the build.
 */
export function outOfRange(array: { readonly length: number }, index: number, name: string): never {
  throw new RangeError(`${name}[${index}] is outside the array (length ${array.length})`);
}
