/** Shared helpers for memprof tests. */
import assert from "node:assert/strict";
import type { Domain, Runtime } from "../../lib/runtime/mod.ts";
import { checkDomainInvariants } from "../../lib/memprof/invariants.ts";

/** 5.7-sigma binomial bound check, as OCaml's statmemprof tests use. */
export function assertBinomial(observed: number, n: number, p: number, what: string): void {
  const mean = n * p;
  const sd = Math.sqrt(n * p * (1 - p));
  assert.ok(
    Math.abs(observed - mean) <= 5.7 * sd,
    `${what}: ${observed} samples, expected ${mean.toFixed(1)} ± ${(5.7 * sd).toFixed(1)}`,
  );
}

/** Runs the invariant checker on every domain of a runtime. */
export function checkAll(rt: Runtime): void {
  for (const d of rt.domains) checkDomainInvariants(d.memprof);
}

/**
 * `f33 n`: a combined allocation of 7 blocks (33 words with headers) that memprof walks as
 * blocks of 6, 5, 4, 6, 5, 4, 3 words; `lens` is the compiler's (reverse) order.
 */
export const F33_LENS: readonly number[] = [2, 3, 4, 5, 3, 4, 5];

/** Allocates `f33` on `d` and returns the addresses of its 7 blocks. */
export function f33(d: Domain): number[] {
  const base = d.allocCombined(F33_LENS);
  const out: number[] = [];
  let a = base;
  for (const l of F33_LENS) {
    out.push(a);
    a += l + 1;
  }
  return out;
}
