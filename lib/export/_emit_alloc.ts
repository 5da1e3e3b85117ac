/**
 * The code of allocations: each block of the declared size and source, allocated where the
 * scenario says, and the keep statement that holds it as long as its lifetime says (a keep site
 * of its own per statement).
 * @module
 */
import type { Lifetime, SizeSpec, Step } from "../scenario/spec.ts";
import { MAX_YOUNG_WOSIZE } from "../runtime/mod.ts";
import { allocLinkable, type Ctx, drawnSizes, keepCapacity } from "./_plan.ts";
import { camlFloat, type Emitter } from "./_emit.ts";

/** What a block allocated by a keep statement is: a young block whose first field may hold a
 * pointer (`linkable`, as a list's cells are linked), and whether the allocating expression is
 * already an Obj.t (`bound`). */
interface BlockKind {
  readonly bound?: boolean;
  readonly linkable?: boolean;
}

/** Code allocating `alloc` (an OCaml expression) and keeping it as `l` says. */
export function keepCode(
  em: Emitter,
  alloc: string,
  l: Lifetime,
  ctx: Ctx,
  block: BlockKind = {},
): string {
  const value = block.bound ? alloc : `Obj.repr (${alloc})`;
  if (l.kind === "drop") return `ignore (Sys.opaque_identity (${value}))`;
  return `let blk = ${value} in ${keepStmt(em, l, ctx)}`;
}

/** Keeps `blk` as lifetime `l` says (a new site per lifetime in the program). */
function keepStmt(em: Emitter, l: Lifetime, ctx: Ctx): string {
  const site = (s: Exclude<Lifetime, { kind: "drop" } | { kind: "cycle" }>) =>
    em.siteOf(s, keepCapacity(s, ctx, em.options.callbackKeepCapacity), ctx);
  switch (l.kind) {
    case "drop":
      return "ignore blk";
    case "forever":
      return `keep_slot ${site(l)} blk`;
    case "until": {
      const s = site(l);
      em.releaseOf(l.name).slots.push(s);
      return `keep_slot ${s} blk`;
    }
    case "steps": {
      const s = site(l);
      em.fifoSites.push(s);
      if (l.until !== undefined) em.releaseOf(l.until).fifo.push(s);
      return `keep_steps ${s} ${l.steps} blk`;
    }
    case "cycle": {
      const c = em.fresh("cycle");
      em.inits.push(`let ${c} = ref 0`);
      em.initBlocks.push({ wosize: 1, fields: "ints", via: "root" });
      const arms = l.lifetimes.map((x, i) => `| ${i} -> ${keepStmt(em, x, ctx)}`);
      return `(let k = !${c} in ${c} := (if k + 1 = ${l.lifetimes.length} then 0 else k + 1); ` +
        `match k with ${arms.join(" ")} | _ -> ())`;
    }
    case "ring": {
      const s = site(l);
      if (l.name !== undefined) em.releaseOf(l.name).rings.push(s);
      return `keep_ring ${s} blk`;
    }
    case "list": {
      const s = site(l);
      em.releaseOf(l.name).rings.push(s);
      return `keep_list ${s} blk`;
    }
  }
}

/** The code of an allocation step, and what runs before its handler (see `_emit_steps.ts`,
 * `leaf`): without frames of its own, a drawn size is drawn there. */
export function allocCode(
  em: Emitter,
  st: Extract<Step, { kind: "alloc" }>,
  ctx: Ctx,
): { pre: string; code: string } {
  let code: string;
  let pre = "";
  switch (st.source) {
    case "caml": {
      const n = sizeCode(em, st.size);
      const linkable = allocLinkable(st, n.values);
      if (n.constant !== undefined) {
        code = keepCode(em, camlBlock(n.constant), st.lifetime, ctx, { linkable });
      } else if (st.frames.length === 0) {
        pre = `let n = ${n.draw} in `;
        code = keepCode(em, camlBlockMatch(n.values, "n"), st.lifetime, ctx, { linkable });
      } else {
        code = `let n = ${n.draw} in ${
          keepCode(em, camlBlockMatch(n.values, "n"), st.lifetime, ctx, { linkable })
        }`;
      }
      break;
    }
    case "runtime":
    case "array":
    case "major": {
      const n = sizeCode(em, st.size);
      const expr = st.source === "array" ? "Array.make n z" : "Bytes.create (8 * n - 1)";
      code = `let n = ${n.draw} in ${
        keepCode(em, `Obj.repr (${expr})`, st.lifetime, ctx, {
          linkable: allocLinkable(st, n.values),
        })
      }`;
      break;
    }
    case "custom": {
      const n = st.size as number;
      const m = sizeCode(em, st.customMem ?? 0);
      const dims = em.fresh("dims");
      em.inits.push(`let ${dims} = Array.make ${n - 5} 1`);
      em.initBlocks.push({ wosize: n - 5, fields: "ints", via: "root" });
      code = `${dims}.(0) <- 8 * (${m.draw}); ` + keepCode(
        em,
        `Obj.repr (Bigarray.Genarray.create Bigarray.char Bigarray.c_layout ${dims})`,
        st.lifetime,
        ctx,
      );
      break;
    }
    case "unmarshal":
      code = keepCode(em, marshalled(em, [st.size as number]), st.lifetime, ctx);
      break;
  }
  return { pre, code: em.inFrames(st.frames, code) };
}

/** The code of a combined allocation: its components allocated by one OCaml expression. */
export function combinedCode(
  em: Emitter,
  st: Extract<Step, { kind: "allocCombined" }>,
  ctx: Ctx,
): string {
  const lens = st.sizes as readonly number[];
  // The compiler lists the components in the reverse of their evaluation order.
  const binds: string[] = [];
  for (let k = lens.length - 1; k >= 0; k--) {
    binds.push(`let b${k} = Sys.opaque_identity (${camlExpr(lens[k])}) in`);
  }
  const keeps = lens.map((_, k) =>
    keepCode(em, `Obj.repr b${k}`, st.lifetimes[k] ?? st.lifetimes[0], ctx, {
      bound: true,
      linkable: true,
    })
  );
  return em.inFrames(st.frames[0] ?? [], `${binds.join(" ")} ${keeps.join("; ")}`);
}

/** The code of an unmarshal step: its blocks read from one marshalled value. */
export function unmarshalCode(
  em: Emitter,
  st: Extract<Step, { kind: "unmarshal" }>,
  ctx: Ctx,
): string {
  return em.inFrames(
    st.frames,
    keepCode(em, marshalled(em, st.blocks as readonly number[]), st.lifetime, ctx),
  );
}

/** Code drawing a size as the simulation does, and the values it can take (≤ 256 listed). */
export function sizeCode(em: Emitter, s: SizeSpec): {
  draw: string;
  values: number[];
  constant?: number;
} {
  const values = drawnSizes(s)!;
  if (typeof s === "number") return { draw: `${s}`, values, constant: s };
  if ("uniform" in s) return { draw: `size_uniform ${s.uniform[0]} ${s.uniform[1]}`, values };
  if ("choice" in s) {
    const arr = em.fresh("choice");
    em.inits.push(`let ${arr} = [| ${s.choice.join("; ")} |]`);
    // A global array the program's initialisation allocates (issue 22, rnd-5-311): the
    // harness heap's model counts it, as marking and the pools do.
    em.initBlocks.push({ wosize: s.choice.length, fields: "ints", via: "root" });
    return { draw: `size_choice ${arr}`, values };
  }
  const { mean, max } = s.geometric;
  // Mean 1 is p = 1: every draw is 1 and nothing is drawn (size_geometric returns before
  // using log1p(-1) = -infinity, as the simulation's sizeSource does).
  const p = 1 / mean;
  return { draw: `size_geometric (${camlFloat(p)}) (${camlFloat(Math.log1p(-p))}) ${max}`, values };
}

/** A string holding a marshalled value whose blocks intern reads in the order `blocks`. */
function marshalled(em: Emitter, blocks: readonly number[]): string {
  const v = em.fresh("marshalled");
  em.inits.push(
    `let ${v} =\n  let sizes = [| ${blocks.join("; ")} |] in\n` +
      "  let rec build i =\n    let b = Obj.new_block 0 sizes.(i) in\n" +
      "    for j = 0 to sizes.(i) - 1 do Obj.set_field b j (Obj.repr 0) done;\n" +
      "    if i + 1 < Array.length sizes then Obj.set_field b 0 (build (i + 1));\n    b\n" +
      "  in\n  Marshal.to_string (build 0) []",
  );
  // Blocks over Max_young_wosize words are built in the major heap (Obj.new_block's
  // caml_alloc_shr), and dropped once marshalled. A young block that such a block links,
  // directly or through young ones, is in the remembered set (Obj.set_field's caml_modify):
  // the next minor collection promotes it, garbage.
  // First its temporaries, young and dropped: the `sizes` array and `build`'s closure (its
  // code pointer, closure information and `sizes`), which the minor heap's filling counts.
  // All of them live until the string is made (`group`): a minor collection meanwhile promotes
  // them.
  const group = em.initBlocks.length;
  em.initBlocks.push(
    { wosize: blocks.length, fields: "ints", via: "dead", group },
    { wosize: 3, fields: "pointers", via: "dead", group },
  );
  let major = false;
  for (const n of blocks) {
    const promoted = major && n <= MAX_YOUNG_WOSIZE ? { promoted: true as const } : {};
    em.initBlocks.push({ wosize: n, fields: "ints", via: "dead", group, ...promoted });
    if (n > MAX_YOUNG_WOSIZE) major = true;
  }
  // The string stays in the heap: Marshal's 20-byte header, then per block a 1-byte header
  // (fewer than 8 fields, tag 0) or a 5-byte one, and one byte per integer field (a block's
  // first field holds the next block, written in place).
  let bytes = 20;
  blocks.forEach((n, i) => {
    bytes += (n < 8 ? 1 : 5) + n - (i + 1 < blocks.length && n > 0 ? 1 : 0);
  });
  em.initBlocks.push({ wosize: Math.floor(bytes / 8) + 1, fields: "noscan", via: "root", group });
  // The primitive itself, not Marshal.from_string: its OCaml wrappers would add two frames.
  return `(input_value_from_string ${v} 0 : Obj.t)`;
}

/** An OCaml expression allocating one block of `n` words in OCaml code (`Alloc_small`). */
function camlExpr(n: number): string {
  if (n > MAX_YOUNG_WOSIZE) return `Array.make ${n} z`;
  if (n === 1) return "ref z";
  return `(${new Array<string>(n).fill("z").join(", ")})`;
}

/** The Obj.t of a block of `n` words allocated in OCaml code. */
export function camlBlock(n: number): string {
  return `Obj.repr (Sys.opaque_identity (${camlExpr(n)}))`;
}

/** A match allocating a block of `n` words for each possible size. When every size is at most
 * 256 words, the largest is the catch-all arm, so that every arm allocates inline. */
function camlBlockMatch(values: readonly number[], v: string): string {
  const small = [...new Set(values)].filter((n) => n <= MAX_YOUNG_WOSIZE).sort((a, b) => a - b);
  if (small.length === values.length && small.length > 0) {
    const last = small.pop()!;
    const arms = small.map((n) => `| ${n} -> ${camlBlock(n)}`);
    return `(match ${v} with ${arms.join(" ")} | _ -> ${camlBlock(last)})`;
  }
  const arms = small.map((n) => `| ${n} -> ${camlBlock(n)}`);
  return `(match ${v} with ${arms.join(" ")} | n -> Obj.repr (Array.make n z))`;
}
