/**
 * The remembered set: a program storing young blocks in fresh slots of a global array adds one
 * entry to its domain's ref table per block, and at minor heap / 8 entries (here 4,096) OCaml
 * 5.3 requests a minor collection (minor_gc.c, realloc_generic_table) long before the minor heap
 * is full. Blocks linked to each other (a list) or overwriting young blocks in a small ring of
 * slots cost no entry, and collect only when the heap fills.
 *
 * The OCaml program: `kept.(i) <- ref i` for i = 1..20,000 into a 20,000-slot array, then the
 * same loop building a list, then storing into a 100-slot ring; rate 0.01.
 */
import { keep, scenario } from "../lib/scenario/mod.ts";

export default scenario({
  name: "remembered_set",
  description: "young blocks stored in global slots fill the ref table and force minor GCs",
  minorHeapWords: 32_768,
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.01, callstackSize: 0 });
  main.repeat(20_000, () => main.alloc(1, { lifetime: keep.until("slots") }));
  s.release("slots");
  main.minorGc();
  main.repeat(20_000, () => main.alloc(1, { lifetime: keep.list("list") }));
  s.release("list");
  main.minorGc();
  main.repeat(20_000, () => main.alloc(1, { lifetime: keep.ring(100) }));
  main.memprof.stop();
});
