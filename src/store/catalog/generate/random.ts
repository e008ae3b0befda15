import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { uniformInt } from "pure-rand/distribution/uniformInt";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import type { RandomGenerator } from "pure-rand/types/RandomGenerator";

/**
 * The generator's only source of randomness. Every draw comes from one seeded xoroshiro128+ stream in a
 * fixed order, so a seed always produces the same catalog, byte for byte.
 */
export class Random {
  private readonly rng: RandomGenerator;

  constructor(seed: number) {
    this.rng = xoroshiro128plus(seed);
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return uniformInt(this.rng, min, max);
  }

  /** A float in [0, 1). */
  float(): number {
    return uniformFloat64(this.rng);
  }

  chance(probability: number): boolean {
    return this.float() < probability;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.int(0, items.length - 1)];
    if (item === undefined) throw new RangeError("pick from an empty list");
    return item;
  }

  /** An index into a list skewed towards its start: a few items (popular acts) are drawn far more often. */
  skewedIndex(length: number): number {
    const u = this.float();
    return Math.min(length - 1, Math.floor(length * u * u * u));
  }
}

/** Draws from a fixed set of weighted choices with one random number and a binary search. */
export class WeightedChoice<T> {
  private readonly cumulative: number[] = [];
  private readonly total: number;

  constructor(
    private readonly items: readonly T[],
    weights: readonly number[],
  ) {
    if (items.length === 0 || items.length !== weights.length)
      throw new RangeError("weighted choice needs items");
    let sum = 0;
    for (const weight of weights) {
      sum += weight;
      this.cumulative.push(sum);
    }
    this.total = sum;
  }

  draw(random: Random): T {
    const target = random.float() * this.total;
    let low = 0;
    let high = this.cumulative.length - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((this.cumulative[middle] ?? 0) > target) high = middle;
      else low = middle + 1;
    }
    const item = this.items[low];
    if (item === undefined) throw new RangeError("weighted choice out of range");
    return item;
  }
}
