/**
 * Issue 22: 4,000 dropped `Array.make 300` with a 4,096-word minor heap, a program without keep
 * sites. Its harness differs from the one the pacing model was measured with: `site_capacity`
 * and `fifo_sites` are the empty array (a static atom) where a literal of one element is a
 * 2-word block allocated when evaluated (arrays are mutable: the literal is copied), and the
 * program runs as `/tmp/memprof-lab-XXXXXXXXXXXXXXXX/program`, whose `Sys.argv` holds that
 * 41-character path (the model had been measured with `./program`: 4 words less to mark in
 * every cycle). And from the fifth cycle on, marking visits the `Gc.quick_stat ()` record the
 * harness keeps on its stack (its 17 fields and three floats: 23 words), and an array whose
 * `Array.make` ends a cycle (in `caml_process_pending_actions`, the array in a `CAMLlocal`) is
 * darkened as a local root when the next cycle starts: 292 words, its fields past the eighth,
 * not 301 (major_gc.c, `mark_stack_push_block`). The simulation started
 * 12 words of work behind OCaml 5.3 and marked 27 words less per cycle; a slice swept one
 * 301-word block more than OCaml's, the heap sizes parted, and the cycle OCaml ends at
 * iteration 990 ended at 987. (No one of these corrections alone brings them together.)
 */
import { scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "no_keep_site_harness", minorHeapWords: 4_096 }, (s) => {
  const m = s.main;
  m.memprof.start({ samplingRate: 0.01, callstackSize: 4 });
  m.repeat(4_000, () => m.alloc(300, { source: "array" }));
  m.memprof.stop();
});
