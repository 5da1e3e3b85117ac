/**
 * The scenario library: every scenario `deno task scenario` runs and `deno test` checks against
 * its goldens. Add a scenario by writing its module and listing it here.
 * @module
 */
import type { Scenario } from "../lib/scenario/mod.ts";
import ref_loop from "./ref_loop.ts";
import triple_cons from "./triple_cons.ts";
import lifecycle from "./lifecycle.ts";
import comballoc from "./comballoc.ts";
import exception_comballoc from "./exception_comballoc.ts";
import exception_callback from "./exception_callback.ts";
import exception_callback_minor from "./exception_callback_minor.ts";
import start_stop from "./start_stop.ts";
import stop_start_in_callback from "./stop_start_in_callback.ts";
import discard_in_callback from "./discard_in_callback.ts";
import thread_exit_in_callback from "./thread_exit_in_callback.ts";
import lists_in_minor from "./lists_in_minor.ts";
import arrays_in_major from "./arrays_in_major.ts";
import alloc_counts from "./alloc_counts.ts";
import domains_orphans from "./domains_orphans.ts";
import restart_mid_comballoc from "./restart_mid_comballoc.ts";
import service from "./service.ts";
import sources from "./sources.ts";
import threads from "./threads.ts";
import callback_actions from "./callback_actions.ts";
import tracer_reentrancy from "./tracer_reentrancy.ts";
import array_loop_300 from "./array_loop_300.ts";
import array_loop_1000 from "./array_loop_1000.ts";
import array_loop_5000 from "./array_loop_5000.ts";
import mixed_minor_major_loop from "./mixed_minor_major_loop.ts";
import growing_set from "./growing_set.ts";
import gc_in_callbacks from "./gc_in_callbacks.ts";
import raise_in_loop_attempt from "./raise_in_loop_attempt.ts";
import raise_in_loop_unguarded from "./raise_in_loop_unguarded.ts";
import raise_pending_unguarded from "./raise_pending_unguarded.ts";
import bigarray_custom from "./bigarray_custom.ts";
import unmarshal_shapes from "./unmarshal_shapes.ts";
import spawned_profile_after_stop from "./spawned_profile_after_stop.ts";
import spawned_profile_only from "./spawned_profile_only.ts";
import domain_exit_tracked from "./domain_exit_tracked.ts";
import thread_block_in_callback from "./thread_block_in_callback.ts";
import runtime_poll from "./runtime_poll.ts";
import none_vs_some_small_heap from "./none_vs_some_small_heap.ts";
import local_roots from "./local_roots.ts";
import remembered_set from "./remembered_set.ts";
import loop_indices from "./loop_indices.ts";
import blocking_in_callback from "./blocking_in_callback.ts";
import threads_in_callbacks from "./threads_in_callbacks.ts";
import spawned_domain_threads from "./spawned_domain_threads.ts";

/** Every registered scenario, in the order the CLI runs them. */
export const scenarios: readonly Scenario[] = [
  ref_loop,
  triple_cons,
  lifecycle,
  comballoc,
  exception_comballoc,
  exception_callback,
  exception_callback_minor,
  start_stop,
  stop_start_in_callback,
  discard_in_callback,
  thread_exit_in_callback,
  lists_in_minor,
  arrays_in_major,
  alloc_counts,
  domains_orphans,
  restart_mid_comballoc,
  service,
  sources,
  threads,
  callback_actions,
  tracer_reentrancy,
  array_loop_300,
  array_loop_1000,
  array_loop_5000,
  mixed_minor_major_loop,
  growing_set,
  gc_in_callbacks,
  raise_in_loop_attempt,
  raise_in_loop_unguarded,
  raise_pending_unguarded,
  bigarray_custom,
  unmarshal_shapes,
  spawned_profile_after_stop,
  spawned_profile_only,
  domain_exit_tracked,
  thread_block_in_callback,
  runtime_poll,
  none_vs_some_small_heap,
  local_roots,
  remembered_set,
  loop_indices,
  blocking_in_callback,
  threads_in_callbacks,
  spawned_domain_threads,
];
