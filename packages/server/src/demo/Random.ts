/** Seeded randomness for the demo generator: the same seed always gives the same history. */

/** mulberry32: a tiny, fast, well-distributed 32-bit PRNG. Returns floats in [0, 1). */
export const mulberry32 = (seed: number): () => number => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export type Rand = () => number

/** A value in [lo, hi). */
export const between = (rand: Rand, lo: number, hi: number): number => lo + rand() * (hi - lo)

/** 1 ± spread, uniformly. */
export const jitter = (rand: Rand, spread: number): number => 1 + (rand() * 2 - 1) * spread

/** An integer in [lo, hi]. */
export const intBetween = (rand: Rand, lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1))

/** Knuth's Poisson sampler (fine for the small λ used here). */
export const poisson = (rand: Rand, lambda: number): number => {
  if (!(lambda > 0)) return 0
  const limit = Math.exp(-lambda)
  let k = 0
  let p = 1
  do {
    k++
    p *= rand()
  } while (p > limit)
  return k - 1
}

/** One of `items`, drawn with the given weights (which need not sum to 1). */
export const weighted = <A>(rand: Rand, items: ReadonlyArray<readonly [A, number]>): A => {
  const total = items.reduce((s, [, w]) => s + w, 0)
  let r = rand() * total
  for (const [item, w] of items) {
    r -= w
    if (r < 0) return item
  }
  return items[items.length - 1][0]
}

/**
 * Splits the integer `total` into integer parts proportional to `weights` that sum to `total` exactly
 * (largest remainder), so additive figures (pageviews, sessions) of hours or pages add up to the day.
 */
export const apportion = (total: number, weights: ReadonlyArray<number>): Array<number> => {
  const sum = weights.reduce((s, w) => s + w, 0)
  if (sum <= 0 || total <= 0) return weights.map(() => 0)
  const exact = weights.map((w) => (total * w) / sum)
  const parts = exact.map(Math.floor)
  let left = total - parts.reduce((s, p) => s + p, 0)
  const order = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1])
  for (const [, i] of order) {
    if (left <= 0) break
    parts[i]++
    left--
  }
  return parts
}
