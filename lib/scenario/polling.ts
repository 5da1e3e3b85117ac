/**
 * Where OCaml code polls: ocamlopt (asmcomp/polling.ml) puts a poll point at a loop's back-edge
 * unless every path through the loop body allocates in the loop's own function (an
 * `Alloc_small`). Calls do not count (the analysis is per function), nor do allocations
 * inside a nested loop (it may run zero times) or inside an `attempt` (an exception may skip
 * them). The simulation polls at a `repeat`'s back-edge by this rule, and the OCaml export
 * writes loop bodies of the same shape, so both agree on where polls are.
 * @module
 */
import type { SizeSpec, Step } from "./spec.ts";

import { MAX_YOUNG_WOSIZE } from "../runtime/mod.ts";

/** The largest size a spec can give (Infinity when unbounded). */
export function maxSize(s: SizeSpec): number {
  if (typeof s === "number") return s;
  if ("uniform" in s) return s.uniform[1];
  if ("choice" in s) return Math.max(...s.choice);
  return s.geometric.max ?? Infinity;
}

/** How many different sizes a spec can give (Infinity when unbounded). */
export function distinctSizes(s: SizeSpec): number {
  if (typeof s === "number") return 1;
  if ("uniform" in s) return s.uniform[1] - s.uniform[0] + 1;
  if ("choice" in s) return new Set(s.choice).size;
  return s.geometric.max ?? Infinity;
}

/**
 * Whether a step is an allocation by OCaml code in the function running it, that ocamlopt's
 * polling analysis sees: an `alloc` of at most 256 words with no frames of its own, or an
 * `allocCombined` with none. A size drawn among four or more values is a `match` that ocamlopt
 * compiles to a switch (`Iswitch`), and OCaml 5.3's analysis (asmcomp/dataflow.ml) folds a
 * switch's arms from its bottom value, which is "unsafe": the allocations in its arms do not
 * count, and the loop gets a poll at its back-edge.
 */
export function allocatesInline(st: Step): boolean {
  if (st.kind === "alloc") {
    return st.source === "caml" && st.frames.length === 0 &&
      maxSize(st.size) <= MAX_YOUNG_WOSIZE && distinctSizes(st.size) < 4;
  }
  if (st.kind === "allocCombined") return st.frames.every((f) => f.length === 0);
  return false;
}

/** Whether every path through a loop body allocates inline, so that OCaml puts no poll at the
 * loop's back-edge. */
export function allocatesOnEveryPath(body: readonly Step[]): boolean {
  return body.some(allocatesInline);
}
