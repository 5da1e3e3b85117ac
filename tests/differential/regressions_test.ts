// Regressions of issue 22 ("Export and simulation bugs"), each with its minimal scenario in
// tests/differential/regressions/ (`deno task diff ./tests/differential/regressions/NAME.ts`):
//
// 1. sizes.geometric with mean 1 (p = 1) was exported as `log1p(-1)` = `(-infinity)`, which
//    does not compile (geometric_mean_one);
// 2. callbacks of a profile stopped but not discarded ran, with their actions, while the program
//    printed its log after the run; one raised and the program died (callbacks_after_run);
// 3. a callback raising in the poll of a keep.steps release (the step's tick) was uncaught in the
//    simulation; the program let it leave the enclosing loop in the middle of its releases, and
//    a named release's single slot had no poll at all (promote_raise_in_release,
//    promote_raise_in_release_thread, release_poll_raise);
// 4. the exporter's model of the program's own heap looped for ever when a harness slice had no
//    work to do (harness_heap_slices);
// 5. callbacks that a spawned domain's end made ready on the main domain ran inside the
//    program's unguarded Domain.join (or the baton's wait loop), and one raising killed the
//    program (domain_join_raise);
// 6. blocks kept in the program's global slots were young when two domains shared a minor
//    collection, and OCaml 5.3 reported them dead in some runs and promoted in others
//    (kept_young_at_spawn);
// 7. a write to an inactive runtime_events ring was simulated as a C call, which made the next
//    allocation enter the runtime and collect one iteration early (user_event_inactive);
// 8. the slice Bytes.create asks for (caml_alloc_string: caml_check_urgent_gc) was simulated at
//    the next poll, after the next step's releases, not inside Bytes.create
//    (bytes_create_urgent_gc);
// 9. a loop whose body polls (Sys.poll_actions, an Ipoll) has no back-edge poll in OCaml; the
//    simulation put one there (poll_step_in_loop; fixed in lib/scenario/polling.ts);
// 10. the major GC's pacing drifted from OCaml 5.3's (lib/runtime/major_gc.ts): a major cycle
//    ending inside Bytes.create keeps the new string, a local root, one more cycle
//    (bytes_create_cycle_end); a block a global slot loses before marking reaches the slot is
//    darkened by caml_modify's write barrier, at the marking cost of a darkened block
//    (kept_blocks_write_barrier, kept_blocks_with_arrays, ring_write_barrier,
//    bigarray_ring_barrier), as a local root darkened when a cycle starts does; and the exported
//    program's own heap (lib/export/_harness_heap.ts) lacked its array literals, the path in
//    Sys.argv and the Gc.quick_stat record on its stack (no_keep_site_harness,
//    array_make_dropped_loop);
// 11. where ocamlopt 5.3 puts back-edge polls (asmcomp/polling.ml, modelled over the exported
//    program's shapes by lib/scenario/polling.ts): an outer loop starting with a poll step has
//    none (poll_step_outer_loop); with raising callbacks, a loop's exception handler leads to
//    what follows the loop, and a nested loop allocating polls (raising_tracker_nested_loop); a
//    jump table (a size drawn among four in a row, a keep.cycle of three) makes a loop poll
//    whatever follows it (switch_before_alloc); a domain's end runs its pending callbacks at
//    do_at_exit's poll (worker_end_pending), and a systhread's end ran its pending callbacks in
//    Thread.create's wrapper, which swallows their exceptions (thread_end_pending): the program
//    drains them first; and the program's recording code polled inside callbacks, doing the GC
//    work due there (record_without_polls).
// 12. (random campaign, seed 3) blocks kept with keep.steps(n, name) and released by name before
//    their step: the program's named release leaves `next_due` as it was, so `tick` polls once
//    (its `release_due`) at the first of their steps and never at the others; the simulation
//    polled at every one of them (named_release_due_poll; lib/scenario/lifetimes.ts);
// 13. (random campaign, seed 3) custom blocks whose out-of-heap memory asks for a major cycle's
//    work at almost every allocation amplify any error in the marking work of the program's own
//    data, until a cycle ends at another allocation than in OCaml: the config blocks of
//    profiles memprof's roots no longer hold cost 10 words, not 8, and the harness's `prof`
//    array is scanned from its first slot holding a profile (custom_cycles_stopped_profiles;
//    lib/runtime/runtime.ts);
// 14. the same with systhreads: the threads library's data, a waiting systhread
//    (custom_cycles_thread) and an ended one (custom_cycles_thread_end) cost what OCaml 5.3's
//    marking charges (lib/export/_harness_heap.ts, lib/scenario/engine/_threads.ts);
// 15. the same after a value of more than 256 words was built at the program's initialisation,
//    to be unmarshalled: it is allocated in the major heap (custom_cycles_marshal_build;
//    lib/export/ocaml.ts);
// 16. a callback raising in Thread.create's wrapper, at the thread's end (`check_memprof_cb`),
//    was logged as an escape; the wrapper's handler prints it on stderr, and the program logs
//    nothing (thread_wrapper_raise; seed 3, scenario 227);
// 17. marking was an amount taken min(budget, left) a slice; OCaml 5.3's mark loop drains its
//    prefetch buffer once a slice's budget is spent (major_gc.c, do_some_marking), marking every
//    string of a keep site it holds far past the budget, and its order decides which blocks a
//    site loses before marking scans it (ring_bytes_drain, steps_bytes_drain); a stopped
//    profile's config block is reached through the program's profile slot, not memprof's roots
//    (profile_config_marking); a program writing user events links runtime_events.cmxa, whose
//    data and the events' own add to what every cycle marks (events_harness_marking). The
//    simulation now runs the mark loop over the exported program's data (lib/runtime/_mark.ts).
//    Its model derives the costs of entries 13 to 15 from the blocks (lib/export/_harness_heap.ts,
//    harnessMarkLayout; tests/runtime/mark_test.ts): the config blocks through memprof's roots and
//    the prof slots, the systhreads' descriptors and conditions darkened while their thread lives
//    (no longer in the capture of the threads library's data), no global for a value built only
//    to be marshalled; and the runtime's list of registered user events, which the capture of
//    runtime_events.cmxa's data held for two events (events_harness_marking, one event, marked
//    3 words a cycle too many);
// 18. an unmarshalled value kept in a keep.ring took a slot per block in the simulation, one per
//    value in the program (unmarshal_ring); a callback's act.alloc made a new keeper at each
//    run, where the program has one keep site per action;
// 19. (random campaign, seed 3) the program's initial heap (lib/export/_harness_heap.ts): a
//    program linking runtime_events.cmxa started 116 words of work ahead of OCaml's, and 32 more
//    per user event it registers (the library's initialisation and data, each event's blocks:
//    user_events_init_work, from rnd-3-4); a young block that a value's block of more than 256
//    words links, built to be marshalled, is promoted through the remembered set
//    (custom_cycles_marshal_promoted, from rnd-3-60: 7,591 words of work behind).
// 20. (random campaign, seed 5) a callback of a combined allocation that hands the baton to
//    another thread: that thread's sampled blocks took the combined allocation's component
//    callstack, which the runtime kept while the callbacks ran; OCaml 5.3 captured those stacks
//    before the first callback, and the other thread's block has its own (comballoc_switch_callstack;
//    lib/runtime/runtime.ts, captureCallstack).
// 21. (random campaign, seed 5) two domains: the simulation kept one major heap for all of them,
//    and a spawned domain's slice swept and marked the main domain's heap, ending a cycle OCaml
//    5.3 ends later; 5.3 keeps a heap per domain, paces each domain's slices by its own heap's
//    size, has each sweep its own, waits for every domain's slice in each phase, and orphans a
//    terminated domain's pools (spawned_domain_own_heap; lib/runtime/major_gc.ts,
//    lib/runtime/_major_heap.ts).
// 22. (random campaign, seed 5) a minor collection promoted the roots in allocation order; OCaml
//    5.3 promotes the remembered set first, in the order of its entries, and a keep site's slot
//    stored twice since the last collection promotes the block it holds now at its first entry:
//    the order decides which pool each block goes to, hence which pools a sweep frees slots in or
//    empties, and when a new pool is taken (remembered_set_order, from rnd-5-228;
//    lib/runtime/runtime.ts, minorCollection).
// 23. (random campaign, seed 10) a lifetime shared by several steps (`keep.forever` is one value)
//    has a keep site per step in the program, numbered in the program's order (the main
//    program's steps before a systhread's); the simulation gave each step the lifetime's next
//    site in the order it compiled steps (the thread's body first), so 400 kept strings went to
//    an 8-slot site and marking found 8 of them: OCaml 5.3 drains hundreds in one slice
//    (forever_shared_sites, from rnd-10-103; keep sites are recorded per step,
//    `KeepSiteOf.owner`, lib/export/ocaml.ts and lib/scenario/engine/_context.ts).
// 24. (random campaign, seed 9; numbered by the next free entry when written, another helper
//    may have taken it) memprof's callstack arrays are young blocks that the entry holds until
//    its allocation callback starts; a minor collection in between (the `sample_info` record's
//    allocation filling the minor heap) promotes them through memprof's roots. The simulation
//    promoted none: 6 words fewer at two minor collections, and a major cycle ended later
//    (callstack_promoted, from rnd-9-162; lib/memprof/memprof.ts, promoteYoungData).
// 25. (random campaign, seed 5) intern_end holds an unmarshalled value in one local root, its
//    root block, the others reached through it; the simulation held each block in a local root,
//    darkened as roots when a cycle started in a callback, which marking charges less than
//    blocks reached by scanning (unmarshal_value_local_root, from rnd-5-150;
//    lib/runtime/runtime.ts, #valueRoots).
// 26. (random campaign, seed 9) `Gc.compact`: a block compaction moved became a copy the heap's
//    lists did not hold, so the original was never swept (compacted_blocks_swept, from rnd-9-56
//    and rnd-9-31; lib/runtime/major_gc.ts, `move`); and compaction repacks the partially filled
//    pools of each size class and releases the pools it empties, which the simulation did not
//    (compaction_repacks_pools; lib/runtime/_major_heap.ts, `compact`).
// 27. (random campaign, seed 13) the program's initial heap again: the prelude's small values in
//    the program's order and at their real sizes (the empty weak array a 4-word ephemeron that
//    caml_alloc_shr puts in the major heap), `Array.map`'s result array made after its first
//    element, whose later stores darken that element through the write barrier, and a large
//    table in the primitive's local root when its slice starts a cycle: the scenario started
//    with 18 words more work done than OCaml's (harness_tables_in_order, from rnd-13-560;
//    lib/export/_harness_heap.ts, lib/export/_harness_tables.ts).
// 28. (random campaign, seed 13) the harness's `doms` array held immediates until each spawn,
//    where the marking layout had pointers from the start (darkening pushed its fields: 6
//    words a cycle too many for 7 domains), and the handles it holds once spawned (with their
//    term_sync, mutex, condition and result) cost marking nothing in the simulation
//    (domain_slots_marked, from rnd-13-1180; lib/runtime/_mark.ts, `dK` and `eK` fields).
// 29. (random campaign, seed 14) the model of the program's heap filled no minor heap at
//    initialisation: with a 4,096-word one, a user event's 13 words took the harness's young
//    blocks past its middle, where OCaml 5.3 runs a slice that ended the first cycle before
//    `Gc.full_major ()` (young_midpoint_at_init, from rnd-14-691; lib/export/_harness_heap.ts).
// 30. (random campaigns, seeds 14 and 15) a keep site's slot stored again (a ring's) got no
//    remembered set entry: only a slot's first store, when its root was made, had one, so that
//    later minor collections promoted a ring's blocks in the slots' creation order where OCaml
//    5.3 takes the first store of each slot since the last collection; other blocks than OCaml's
//    filled the end of a pool, which a sweep then emptied (ring_slot_first_store, from
//    rnd-15-31; ring_slot_first_store_main, from rnd-14-12; lib/runtime/runtime.ts,
//    `slotStored`).
// 31. (random campaign, seed 17) a marshalled value's blocks, all on the stack of the recursion
//    that builds them until it is marshalled, died young in the model of the program's heap; a
//    cycle ending while they were made promoted them and its successor darkened them, so that
//    the scenario started 13,176 words of work behind OCaml's (marshal_build_live, from
//    rnd-17-1264; lib/export/_harness_heap.ts, `HarnessBlock.group`).
// 32. (random campaign, seed 17) the mark stack grew without bound: OCaml 5.3 compresses a full
//    stack past a 32nd of the heap, and darkens the compressed fields last, charging nothing for
//    immediates; a keep site released while a cycle marked pushed 9,201 ranges of immediates,
//    which the simulation scanned, marking 61,305 words more in that cycle (mark_stack_pruned,
//    from rnd-17-1220; lib/runtime/_mark.ts, `#reallocStack`, `#prune`).
// 33. (issue 24) external allocations, now exported (memtrace's External emulated): the
//    simulation allocated `Printexc.get_callstack`'s array as OCaml code, ran its callbacks
//    outside the tracer's lock, and did not poll in memtrace's sampling loop, where a runtime
//    allocation's pending callback runs under the lock (external_alloc_polls), and allocated at
//    most 256 words where a deeper callstack's array is a major block (external_callstack_major),
//    and did not return from the C call that runs those callbacks, whose return with an action
//    pending (memprof's callbacks end by flagging one) makes the next poll collect
//    (external_return_from_c; lib/scenario/engine/_compile_alloc.ts, `extAllocWork`).
// 34. (random campaign, seed 19) the model of the program's heap ran at once the slice that
//    `caml_poll_gc_work` asks of every domain when a global slice falls short of its target
//    (here by ending a cycle); OCaml 5.3 runs it at the next poll, after the next block, and the
//    scenario started 137,821 words of work behind (slice_due_next_poll, from rnd-19-301;
//    lib/export/_harness_heap.ts, `sliceDue`).
// 35. (issue 24, threads with domains) a spawned domain's DLS array died with the domain's body,
//    before its last collection; OCaml 5.3 removes the domain's `dls_root` only after that
//    collection, which promotes a young DLS array (dls_at_termination;
//    lib/scenario/engine/_compile_domains.ts, `domainStateFreed`).
// 36. (issue 24) threads with programs in a scenario with several domains, now exported:
//    `Domain.spawn` splits the parent's `Random` state and the new domain allocates its
//    systhread's descriptor when the threads library is linked (threads_domains_spawn;
//    lib/scenario/engine/_spawn_threads_library.ts); every wait of a domain is one blocking
//    section, whose leaving draws a sampling trigger (threads_domains;
//    lib/scenario/engine/_domain_waits.ts); and two domains' callbacks recording at once took
//    one number (the program's `serial` and `log_n` are now taken atomically).
// 37. (issue 24) external allocations where callbacks raise, with domains and with systhreads,
//    now exported: a callback raising under memtrace's lock escaped the step, where memtrace's
//    slow path catches it and marks the tracer failed, after which nothing is tracked
//    (external_raise_under_lock; lib/tracer/tracer.ts, `failed`); a spawned domain's external
//    allocations were sampled under the one lock, where memtrace's ext_alloc returns at once
//    off the main domain; and the callback of a sampled `Condition.create` or `Mutex.create` in
//    `Domain.spawn` waited for the parent's next turn, where the C primitive's return makes the
//    spawn's next allocation run it (external_domains_threads;
//    lib/scenario/engine/_compile_domains.ts, `spawnParentAllocationsG`).
// 38. (random campaign, seed 28) a terminated domain's DLS array was released only at a `join`
//    step: after a `terminate` it lived on, where OCaml 5.3 removes the domain's `dls_root` after
//    its last collection, and the next major cycle reported it dead (dls_freed_at_terminate, from
//    rnd-28-324; lib/scenario/engine/_compile_domains.ts, `endDomain`).
//
// The simulation's side and the program's shape are tested here without OCaml; with an OCaml 5.3
// toolchain (tests/real_toolchain.ts), every module of tests/differential/regressions/ is also
// run on the real runtime and must agree with the simulation.
import assert from "node:assert/strict";
import {
  keep,
  type RunEvent,
  type RunOptions,
  runScenario,
  type Scenario,
  scenario,
  sizes,
} from "../../lib/scenario/mod.ts";
import { exportOCaml, HARNESS_FRAMES } from "../../lib/export/mod.ts";
import { Runtime } from "../../lib/runtime/mod.ts";
import { differenceContext, differenceSummary, diffScenario } from "../../lib/differential/mod.ts";
import { DIFF_CACHE, DIFF_SKIP, REAL_OCAML, skipNotice } from "../real_toolchain.ts";
import type { HarnessHeapAnswer, HarnessHeapRequest } from "./regressions_worker.ts";
import geometricMeanOne from "./regressions/geometric_mean_one.ts";
import callbacksAfterRun from "./regressions/callbacks_after_run.ts";
import promoteRaiseInRelease from "./regressions/promote_raise_in_release.ts";
import promoteRaiseInReleaseThread from "./regressions/promote_raise_in_release_thread.ts";
import releasePollRaise from "./regressions/release_poll_raise.ts";
import harnessHeapSlices from "./regressions/harness_heap_slices.ts";
import domainJoinRaise from "./regressions/domain_join_raise.ts";
import keptYoungAtSpawn from "./regressions/kept_young_at_spawn.ts";
import userEventInactive from "./regressions/user_event_inactive.ts";
import bytesCreateUrgentGc from "./regressions/bytes_create_urgent_gc.ts";
import pollStepInLoop from "./regressions/poll_step_in_loop.ts";
import bytesCreateCycleEnd from "./regressions/bytes_create_cycle_end.ts";
import keptBlocksWriteBarrier from "./regressions/kept_blocks_write_barrier.ts";
import ringWriteBarrier from "./regressions/ring_write_barrier.ts";
import bigarrayRingBarrier from "./regressions/bigarray_ring_barrier.ts";
import noKeepSiteHarness from "./regressions/no_keep_site_harness.ts";
import arrayMakeDroppedLoop from "./regressions/array_make_dropped_loop.ts";
import keptBlocksWithArrays from "./regressions/kept_blocks_with_arrays.ts";
import pollStepOuterLoop from "./regressions/poll_step_outer_loop.ts";
import raisingTrackerNestedLoop from "./regressions/raising_tracker_nested_loop.ts";
import switchBeforeAlloc from "./regressions/switch_before_alloc.ts";
import workerEndPending from "./regressions/worker_end_pending.ts";
import recordWithoutPolls from "./regressions/record_without_polls.ts";
import threadEndPending from "./regressions/thread_end_pending.ts";
import namedReleaseDuePoll from "./regressions/named_release_due_poll.ts";
import customCyclesThread from "./regressions/custom_cycles_thread.ts";
import customCyclesThreadEnd from "./regressions/custom_cycles_thread_end.ts";
import customCyclesStoppedProfiles from "./regressions/custom_cycles_stopped_profiles.ts";
import customCyclesMarshalBuild from "./regressions/custom_cycles_marshal_build.ts";
import threadWrapperRaise from "./regressions/thread_wrapper_raise.ts";
import comballocSwitchCallstack from "./regressions/comballoc_switch_callstack.ts";
import ringBytesDrain from "./regressions/ring_bytes_drain.ts";
import stepsBytesDrain from "./regressions/steps_bytes_drain.ts";
import profileConfigMarking from "./regressions/profile_config_marking.ts";
import unmarshalRing from "./regressions/unmarshal_ring.ts";
import eventsHarnessMarking from "./regressions/events_harness_marking.ts";
import userEventsInitWork from "./regressions/user_events_init_work.ts";
import customCyclesMarshalPromoted from "./regressions/custom_cycles_marshal_promoted.ts";
import spawnedDomainOwnHeap from "./regressions/spawned_domain_own_heap.ts";
import rememberedSetOrder from "./regressions/remembered_set_order.ts";
import harnessTablesInOrder from "./regressions/harness_tables_in_order.ts";
import domainSlotsMarked from "./regressions/domain_slots_marked.ts";
import youngMidpointAtInit from "./regressions/young_midpoint_at_init.ts";
import ringSlotFirstStore from "./regressions/ring_slot_first_store.ts";
import ringSlotFirstStoreMain from "./regressions/ring_slot_first_store_main.ts";
import marshalBuildLive from "./regressions/marshal_build_live.ts";
import markStackPruned from "./regressions/mark_stack_pruned.ts";
import sliceDueNextPoll from "./regressions/slice_due_next_poll.ts";
import foreverSharedSites from "./regressions/forever_shared_sites.ts";
import callstackPromoted from "./regressions/callstack_promoted.ts";
import unmarshalValueLocalRoot from "./regressions/unmarshal_value_local_root.ts";
import compactedBlocksSwept from "./regressions/compacted_blocks_swept.ts";
import compactionRepacksPools from "./regressions/compaction_repacks_pools.ts";
import externalAllocPolls from "./regressions/external_alloc_polls.ts";
import externalCallstackMajor from "./regressions/external_callstack_major.ts";
import externalReturnFromC from "./regressions/external_return_from_c.ts";
import dlsAtTermination from "./regressions/dls_at_termination.ts";
import threadsDomainsSpawn from "./regressions/threads_domains_spawn.ts";
import threadsDomains from "./regressions/threads_domains.ts";
import externalRaiseUnderLock from "./regressions/external_raise_under_lock.ts";
import externalDomainsThreads from "./regressions/external_domains_threads.ts";
import dlsFreedAtTerminate from "./regressions/dls_freed_at_terminate.ts";
import { backEdgePolls } from "../../lib/scenario/polling.ts";
import { Lifetimes } from "../../lib/scenario/lifetimes.ts";
import { profileSlots } from "../../lib/scenario/walk.ts";
import {
  harnessBlocks,
  harnessMajorHeap,
  userEventBlocks,
} from "../../lib/export/_harness_heap.ts";

const regressions: readonly Scenario[] = [
  geometricMeanOne,
  callbacksAfterRun,
  promoteRaiseInRelease,
  promoteRaiseInReleaseThread,
  releasePollRaise,
  harnessHeapSlices,
  domainJoinRaise,
  keptYoungAtSpawn,
  userEventInactive,
  bytesCreateUrgentGc,
  pollStepInLoop,
  bytesCreateCycleEnd,
  keptBlocksWriteBarrier,
  ringWriteBarrier,
  bigarrayRingBarrier,
  noKeepSiteHarness,
  arrayMakeDroppedLoop,
  keptBlocksWithArrays,
  pollStepOuterLoop,
  raisingTrackerNestedLoop,
  switchBeforeAlloc,
  workerEndPending,
  recordWithoutPolls,
  threadEndPending,
  namedReleaseDuePoll,
  customCyclesThread,
  customCyclesThreadEnd,
  customCyclesStoppedProfiles,
  customCyclesMarshalBuild,
  threadWrapperRaise,
  ringBytesDrain,
  stepsBytesDrain,
  profileConfigMarking,
  unmarshalRing,
  eventsHarnessMarking,
  userEventsInitWork,
  customCyclesMarshalPromoted,
  comballocSwitchCallstack,
  spawnedDomainOwnHeap,
  rememberedSetOrder,
  foreverSharedSites,
  callstackPromoted,
  unmarshalValueLocalRoot,
  compactedBlocksSwept,
  compactionRepacksPools,
  harnessTablesInOrder,
  domainSlotsMarked,
  youngMidpointAtInit,
  ringSlotFirstStore,
  ringSlotFirstStoreMain,
  marshalBuildLive,
  markStackPruned,
  sliceDueNextPoll,
  externalAllocPolls,
  externalCallstackMajor,
  externalReturnFromC,
  dlsAtTermination,
  threadsDomainsSpawn,
  threadsDomains,
  externalRaiseUnderLock,
  externalDomainsThreads,
  dlsFreedAtTerminate,
];

/** The callbacks and exceptions of a run, with the harness frames the export adds. */
function events(sc: Scenario, opts: RunOptions = {}): RunEvent[] {
  const out: RunEvent[] = [];
  runScenario(sc, { ...opts, onEvent: (e) => out.push(e), harnessFrames: HARNESS_FRAMES });
  return out;
}

/** The text of the top-level definition starting with `head` in `source`. */
function definition(source: string, head: string): string {
  const start = source.indexOf(head);
  assert.ok(start >= 0, `no definition ${head}`);
  const end = source.indexOf("\n\n", start);
  return source.slice(start, end < 0 ? undefined : end);
}

// ---- 1. sizes.geometric with mean 1 -------------------------------------------------------------

Deno.test("geometric mean 1: the program writes log1p(-1) as neg_infinity, a float it compiles", () => {
  const { source } = exportOCaml(geometricMeanOne);
  assert.ok(source.includes("size_geometric (0x1p+0) (neg_infinity) 8"), "mean 1's draw");
  assert.ok(!/\(-infinity\)|\(infinity\)|\(-?nan\)/.test(source), "a non-finite %h literal");
  // size_geometric returns 1 before using log1p(-p) when p >= 1, as the simulation does.
  assert.match(
    definition(source, "let[@inline never] size_geometric"),
    /if p >= 1\. then 1\s+else begin/,
  );
});

Deno.test("geometric mean 1: every block is 1 word and the scenario's generator is not drawn from", () => {
  const build = (meanOneFirst: boolean) =>
    scenario({ name: "geometric_one_then_three", minorHeapWords: 65_536 }, (s) => {
      s.main.memprof.start({ samplingRate: 1, callstackSize: 0 });
      if (meanOneFirst) s.main.repeat(50, () => s.main.alloc(sizes.geometric(1, 8)));
      s.main.repeat(50, () => s.main.alloc(sizes.geometric(3, 8)));
      s.main.memprof.stop();
    });
  const sizesOf = (sc: Scenario) =>
    events(sc).flatMap((e) => e.kind === "allocMinor" ? [e.size] : []);
  const both = sizesOf(build(true));
  const alone = sizesOf(build(false));
  assert.equal(both.length, 100);
  assert.deepEqual(both.slice(0, 50), new Array(50).fill(1));
  // The draws of mean 3 are the same with or without the mean-1 loop before them.
  assert.deepEqual(both.slice(50), alone);
  assert.ok(new Set(alone).size > 2, `mean 3 draws several sizes: ${alone}`);
});

// ---- 2. callbacks after the run ------------------------------------------------------------------

Deno.test("after the run, every callback of the program returns at once, doing none of its actions", () => {
  const { source } = exportOCaml(callbacksAfterRun);
  const heads = [
    ["let cb_0_0 (info : Gc.Memprof.allocation) : int option =", "None"],
    ["let cb_0_1 (info : Gc.Memprof.allocation) : int option =", "None"],
    ["let cb_0_2 (v : int) : int option =", "None"],
    ["let cb_0_3 (v : int) : unit =", "()"],
    ["let cb_0_4 (v : int) : unit =", "()"],
  ];
  for (const [head, nothing] of heads) {
    const body = definition(source, head).split("\n");
    assert.equal(body[1], `  if !frozen then ${nothing} else begin`, head);
    assert.equal(body.at(-1), "  end", head);
  }
  // The raising deallocation callback raises only inside that guard, and frozen is set right
  // after the run's final polls, before anything of the log is printed.
  assert.match(definition(source, "let cb_0_3"), /else begin[^]*raise E_0/);
  const main = source.slice(source.lastIndexOf("let () ="));
  assert.match(main, /run_main \(\);\n\s+frozen := true;/);
  assert.ok(main.indexOf("frozen := true") < main.indexOf("print_log"));
});

// ---- 3. callbacks raising in a release's poll ------------------------------------------------------

/** Checks that each escaped or caught exception of `evs` follows a callback that raised it. */
function assertRaisedByCallbacks(evs: readonly RunEvent[], exn: string): void {
  evs.forEach((e, i) => {
    if (e.kind !== "escaped" && e.kind !== "caught") return;
    assert.equal(e.exn, exn);
    const raiser = evs.slice(0, i).findLast((x) => x.kind !== "escaped" && x.kind !== "caught");
    assert.deepEqual(raiser && "outcome" in raiser ? raiser.outcome : undefined, { raise: exn });
  });
}

Deno.test("a promotion raising in a keep.steps release's poll is the step's: escaped, or caught by its attempt", () => {
  const evs = events(promoteRaiseInRelease);
  const exns = evs.flatMap((e) =>
    e.kind === "escaped" || e.kind === "caught" ? [`${e.kind} ${e.loops.length}`] : []
  );
  // Outside attempts the loops go on after each (10 in the first loop of 3,000, 3 in the last
  // of 1,000), logged inside the loop; the attempt's loop ends at its first, which the attempt
  // (outside the loop) catches.
  assert.deepEqual(exns, [
    ...new Array(10).fill("escaped 1"),
    "caught 0",
    ...new Array(3).fill("escaped 1"),
  ]);
  assertRaisedByCallbacks(evs, "Promoted");
  // Every promotion raises, all at a release's poll: each is followed by the step's exception.
  assert.equal(evs.filter((e) => e.kind === "promote").length, exns.length);
  // The first loop ran to its end: the step after the escape is the loop's next iteration.
  const firstLoop = evs.filter((e) => e.kind === "allocMinor" && e.loops.length === 1);
  assert.ok(firstLoop.some((e) => e.loops[0] === 3_000));
});

Deno.test("a callback raising in a release's poll: the same events with and without bulk loop runs", () => {
  for (const sc of [promoteRaiseInRelease, releasePollRaise]) {
    assert.deepEqual(
      JSON.stringify(events(sc)),
      JSON.stringify(events(sc, { skipQuietIterations: false })),
      sc.settings.name,
    );
  }
});

Deno.test("a promotion raising in a keep.steps release's poll, in a systhread's program (resumable steps)", () => {
  const evs = events(promoteRaiseInReleaseThread);
  assert.ok(evs.filter((e) => e.kind === "escaped").length >= 2);
  assert.equal(evs.filter((e) => e.kind === "caught").length, 1);
  assertRaisedByCallbacks(evs, "Promoted");
});

Deno.test("a callback raising in a named release's poll is the release step's; the next allocation runs", () => {
  const evs = events(releasePollRaise);
  const brief = evs.map((e) =>
    e.kind === "allocMinor"
      ? `${e.kind} ${e.size} ${JSON.stringify(e.outcome)}`
      : `${e.kind} ${"exn" in e ? e.exn : ""}`
  );
  assert.deepEqual(brief, [
    'allocMinor 2 {"raise":"AtRelease"}', // Bytes.create's callback, run by the release's poll
    "escaped AtRelease",
    'allocMinor 3 {"raise":"AtRelease"}',
    "escaped AtRelease",
  ]);
});

Deno.test("the program's ticks and releases: one poll after every due block is released, guarded as a step", () => {
  const { source } = exportOCaml(promoteRaiseInRelease);
  assert.match(source, /let\[@inline never\] tick_g \(\) = try tick \(\) with e -> escaped e/);
  // Steps outside attempts tick through the handler; inside the attempt, the attempt takes it.
  const run = definition(source, "let[@inline never] run_main () =");
  assert.equal(run.match(/tick_g \(\);/g)?.length, 4); // start, two loops' allocations, stop
  assert.equal(run.match(/\btick \(\);/g)?.length, 1);
  // release_due releases without a loop (a loop's back-edges would poll between releases), then
  // polls once.
  const due = definition(source, "let[@inline never] release_due () =");
  assert.equal(
    due,
    "let[@inline never] release_due () =\n  next_due := release_due_from 0 max_int;\n  Sys.poll_actions ()",
  );
  for (const fn of ["clear_range", "release_due_at", "release_due_from"]) {
    const def = definition(source, `let rec ${fn} `);
    assert.ok(!/\b(for|while)\b/.test(def), `${fn} has a loop`);
    // Its recursive call is not a tail call (a tail call to itself would poll).
    assert.match(def, new RegExp(`Sys\\.opaque_identity \\(${fn} `));
  }
  for (const fn of ["release_site", "release_slots", "release_ring"]) {
    assert.ok(!/\b(for|while)\b/.test(definition(source, `let[@inline never] ${fn} s =`)), fn);
  }
  // A named release: its releases, then one poll, guarded as the simulation's.
  const named = exportOCaml(releasePollRaise).source;
  assert.equal(
    definition(named, "let[@inline never] release_0 () ="),
    "let[@inline never] release_0 () =\n  release_slots 0;\n  Sys.poll_actions ()",
  );
  assert.match(named, /tick_g \(\); \(try release_0 \(\) with e -> escaped e\);/);
});

// ---- 4. the harness heap's slices ------------------------------------------------------------------

/** Asks a worker for `req`, failing after `seconds` (the computation once looped for ever). */
async function inWorker(req: HarnessHeapRequest, seconds: number): Promise<readonly number[]> {
  const worker = new Worker(new URL("./regressions_worker.ts", import.meta.url), {
    type: "module",
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const reply = await new Promise<HarnessHeapAnswer>((resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${JSON.stringify(req)}: no answer within ${seconds} s`)),
        seconds * 1000,
      );
      worker.onmessage = (e: MessageEvent<HarnessHeapAnswer>) => resolve(e.data);
      worker.onerror = (e) => {
        e.preventDefault();
        reject(new Error(e.message));
      };
      worker.postMessage(req);
    });
    if (reply.error !== undefined) throw new Error(reply.error);
    return reply.workAhead;
  } finally {
    clearTimeout(timer);
    worker.terminate();
  }
}

Deno.test("the harness heap of an 857-slot site with a 4,096-word minor heap is computed (it looped)", async () => {
  const [ahead] = await inWorker({ kind: "harness", sites: [857, 64, 64], minor: 4096 }, 60);
  assert.ok(Number.isFinite(ahead) && ahead > 0, `work ahead ${ahead}`);
  const [exported] = await inWorker({ kind: "export" }, 60);
  assert.ok(Number.isFinite(exported) && exported > 0, `work ahead ${exported}`);
});

Deno.test("the harness heap is computed for 2,000 random harnesses: minor heaps of 4,096 words up, sites up to 300,000 slots", async () => {
  const aheads = await inWorker({ kind: "sweep", cases: 2000, seed: 22 }, 120);
  assert.equal(aheads.length, 2000);
  assert.ok(aheads.every(Number.isFinite));
});

// ---- 5, 6. the domains' baton: a domain resuming, Domain.join, Domain.spawn ------------------------

/** The callbacks and exceptions of a run as the differential runner simulates it. */
function harnessEvents(sc: Scenario): RunEvent[] {
  return events(sc, { exportHarness: true });
}

Deno.test("a domain's end: the joiner drains its callbacks before its next step, each raise logged", () => {
  const evs = harnessEvents(domainJoinRaise);
  // Each profile's 20 blocks die when the worker ends (its collection empties the main domain's
  // minor heap); every third deallocation raises, and caml_raise runs one more round of
  // callbacks before raising: escaped after the 6th, 12th and 18th.
  for (const w of [0, 1]) {
    const base = w * 20;
    const deallocs = evs.filter((e) =>
      e.kind === "deallocMinor" && e.id > base && e.id <= base + 20
    );
    assert.equal(deallocs.length, 20);
    const from = evs.indexOf(deallocs[0]);
    const to = evs.indexOf(deallocs[19]);
    const brief = evs.slice(from, to + 1).map((e) =>
      "id" in e ? `${e.kind} ${e.id}` : `${e.kind} ${e.loops.length}`
    );
    const expected: string[] = [];
    for (let k = 1; k <= 20; k++) {
      expected.push(`deallocMinor ${base + k}`);
      if (k % 6 === 0) expected.push("escaped 0"); // at the top level
    }
    assert.deepEqual(brief, expected);
    // The main domain's next step (alloc 4) allocates after all of them.
    assert.ok(!evs.slice(to + 1).some((e) => e.kind === "deallocMinor" && e.id <= base + 20));
  }
  assertRaisedByCallbacks(evs, "Boom");
  // Without the export's harness, the callbacks wait for the main domain's next poll (its final
  // one here), where the first raise ends the run's flush.
  const plain = events(domainJoinRaise).filter((e) => e.kind === "deallocMinor");
  assert.ok(plain.length < 40, `${plain.length} deallocations`);
});

Deno.test("the program's baton never polls; it joins through join_dom and resumes through resume_dom", () => {
  const { source } = exportOCaml(domainJoinRaise);
  for (const fn of ["wait_turn_locked", "wait_flag_locked"]) {
    const def = definition(source, `let rec ${fn} `);
    assert.ok(!/\b(for|while)\b/.test(def), `${fn} has a loop`);
    assert.match(def, new RegExp(`Sys\\.opaque_identity \\(${fn} `)); // not a tail call
  }
  assert.ok(!/\bwhile\b/.test(definition(source, "let[@inline never] wait_turn k =")));
  assert.match(
    definition(source, "let rec join_dom "),
    /match Domain\.join d with[^]*exception e -> escaped e; ignore \(Sys\.opaque_identity \(join_dom d\)\)/,
  );
  assert.match(
    definition(source, "let rec resume_dom "),
    /match process_pending \(\) with[^]*exception e -> escaped e; ignore \(Sys\.opaque_identity \(resume_dom \(\)\)\)/,
  );
  // Domain.join during the run only through join_dom; each wait for a turn is followed by the
  // domain's drain (but the last, for the other domains' final polls: the run ends there).
  const run = source.slice(source.indexOf("let[@inline never] run_main () ="));
  const runMain = run.slice(0, run.indexOf("\n\n"));
  assert.ok(!runMain.includes("Domain.join"), runMain);
  const lines = runMain.split("\n").map((l) => l.trim());
  const lastWait = lines.findLastIndex((l) => l.startsWith("wait_turn "));
  lines.forEach((l, i) => {
    if (!l.startsWith("wait_turn ") || i === lastWait) return;
    let k = i + 1;
    while (lines[k].startsWith("join_dom ")) k++;
    assert.equal(lines[k], "resume_dom ();", `after ${l}`);
  });
  assert.match(
    runMain,
    /release_domain 2; join_dom \(Obj\.obj doms\.\(2\) : unit Domain\.t\); resume_dom \(\);/,
  );
});

Deno.test("Domain.spawn: the program empties the minor heap first, and the simulation with it", () => {
  const { source } = exportOCaml(keptYoungAtSpawn);
  assert.match(
    source,
    /\(Gc\.minor \(\)\); resume_dom \(\); \(doms\.\(1\) <- Obj\.repr \(Domain\.spawn run_1\); wait_started 1\);/,
  );
  const evs = harnessEvents(keptYoungAtSpawn);
  // The 15 blocks the ring keeps when the worker is spawned are promoted there, the 25 it
  // overwrote die: all before the worker's allocation and the join.
  const after = evs.filter((e) => e.kind === "promote" || e.kind === "deallocMinor");
  assert.equal(after.filter((e) => e.kind === "promote").length, 15);
  assert.equal(after.filter((e) => e.kind === "deallocMinor").length, 25);
  assert.ok(after.every((e) => e.domain === 0 && e.loops.length === 0));
  // Without the harness, nothing collects the main domain's minor heap before the worker ends.
  const plain = events(keptYoungAtSpawn);
  assert.equal(plain.filter((e) => e.kind === "promote").length, 15);
});

// ---- 7. runtime_events writes to an inactive ring ----------------------------------------------

Deno.test("a user event written to an inactive ring does not return from C: allocations go on as without it", () => {
  const loop = (events: "none" | "inactive" | "active") =>
    scenario({ name: `user_events_${events}`, minorHeapWords: 4096 }, (s) => {
      if (events === "active") s.events.start();
      s.main.memprof.start({ samplingRate: 0.01, callstackSize: 4, tracker: {} });
      s.main.repeat(24, () => {
        if (events !== "none") s.main.userEvent("n", { type: "int", value: 1 });
        s.main.alloc(229);
      });
      s.main.memprof.stop();
    });
  const collectedAt = (sc: Scenario) => events(sc).find((e) => e.kind === "deallocMinor")?.loops[0];
  // 17 blocks of 230 words fit in the 4,096-word minor heap: the 18th allocation collects.
  assert.equal(collectedAt(loop("none")), 18);
  assert.equal(collectedAt(loop("inactive")), 18);
  // With the ring active, each write returns from C: with an action pending, the allocation
  // after it enters the runtime, which asks for the minor collection once fewer than
  // Max_young_whsize words are left.
  assert.equal(collectedAt(loop("active")), 17);
  const evs = events(userEventInactive);
  assert.equal(evs.find((e) => e.kind === "deallocMinor")?.loops[0], 18);
});

// ---- 8. Bytes.create's caml_check_urgent_gc ---------------------------------------------------------

Deno.test("Bytes.create over 256 words runs the slice it asks for inside the primitive", () => {
  // A fifth of the minor heap's words allocated directly asks every domain for a slice.
  const shr = new Runtime({ minorHeapWords: 8192 }).mainDomain;
  shr.allocShr(4160);
  assert.equal(shr.stats.majorSlices, 0, "caml_alloc_shr alone only asks");
  // caml_alloc_string (Bytes.create), as the exported "major" and large "runtime" sources: then
  // caml_check_urgent_gc does the work.
  const str = new Runtime({ minorHeapWords: 8192 }).mainDomain;
  str.allocMajor(4160);
  assert.equal(str.stats.majorSlices, 1, "caml_alloc_string's caml_check_urgent_gc");
  const big = new Runtime({ minorHeapWords: 8192 }).mainDomain;
  big.allocFromRuntime(4160);
  assert.equal(big.stats.majorSlices, 1);
});

Deno.test("a block kept for 50 steps is alive when Bytes.create's slice ends the major cycle: promoted", () => {
  const evs = harnessEvents(bytesCreateUrgentGc);
  const fates = new Map<number, string>();
  for (const e of evs) {
    if (e.kind === "promote" || e.kind === "deallocMinor") fates.set(e.id, e.kind);
  }
  // Block 15 (allocated at iteration 17) is released at the tick of iteration 59's second step;
  // the cycle ends inside the first one's Bytes.create. OCaml 5.3 promotes it.
  assert.equal(fates.get(15), "promote");
  const at = evs.find((e) => e.kind === "promote" && e.id === 15)!;
  assert.deepEqual(at.loops, [59]);
});

// ---- 9. a poll step in a loop body ---------------------------------------------------------------

Deno.test("a loop whose body polls has no back-edge poll: a major allocation's callback runs at the next iteration's poll", () => {
  const at = events(pollStepInLoop).flatMap((e) =>
    e.kind === "allocMajor" ? [e.loops.join(".")] : []
  );
  // As OCaml 5.3 ran them (the sample of iteration k is reported at k + 1's Sys.poll_actions).
  assert.deepEqual(at, [
    ...["1.3", "1.8", "2.6", "2.16", "3.13", "3.17", "3.19"], // the poll in an attempt
    ...["1.2", "1.5", "2.11", "2.13", "2.21", "3.4", "3.12"], // a bare poll step
  ]);
});

// ---- 11. back-edge polls, and a domain's end ------------------------------------------------------

Deno.test("an outer loop starting with a poll step has no back-edge poll: a C allocation's callback runs at the next iteration's poll", () => {
  const depth1 = events(pollStepOuterLoop).filter((e) => e.loops.length === 1);
  // Sampled in the inner loop's last iterations of outer iteration 8, run at iteration 9's poll
  // step (OCaml 5.3.0); at iteration 8's back-edge before the fix.
  assert.deepEqual(depth1.map((e) => [e.kind, ...e.loops]), [["allocMinor", 9]]);
  const outer = pollStepOuterLoop.steps.find((st) => st.kind === "repeat")!;
  assert.ok(!backEdgePolls(pollStepOuterLoop).has(outer));
});

Deno.test("with raising callbacks, a nested loop allocating inline polls at its back-edge", () => {
  const first = events(raisingTrackerNestedLoop).find((e) =>
    e.kind === "deallocMinor" && e.loops[0] >= 122
  );
  assert.deepEqual(first?.loops, [122, 109]); // 122.110 without the poll
});

Deno.test("a jump table before an allocation: the loop polls at its back-edge", () => {
  const loops = switchBeforeAlloc.steps.filter((st) => st.kind === "repeat");
  assert.equal(loops.length, 2);
  assert.ok(loops.every((st) => backEdgePolls(switchBeforeAlloc).has(st)));
  // The C allocations' callbacks run at the back-edge, in the iteration that sampled them: the
  // first one sampled (iteration 2) is logged right after that iteration's other sample.
  const first = events(switchBeforeAlloc).slice(0, 2).map((e) =>
    e.kind === "allocMinor" ? `${e.size} ${e.loops}` : e.kind
  );
  assert.deepEqual(first, ["2 2", "3 2"]);
});

Deno.test("a domain's end runs its pending callbacks on the domain, each raise logged there", () => {
  for (const opts of [{}, { exportHarness: true }]) {
    const evs = events(workerEndPending, opts);
    const brief = evs.map((e) =>
      e.kind === "escaped" || e.kind === "caught"
        ? `${e.kind} d${e.domain} ${e.exn}`
        : `${e.kind} d${e.domain} ${"id" in e ? e.id : ""}`
    );
    // w1: four sampled blocks, the third raising (caml_raise runs the fourth's first); w2: the
    // second raising, the third run after it, when w2 is released by the join (w2 is domain 1
    // too: OCaml reuses the index). Then the main domain's profile.
    assert.deepEqual(brief.filter((b) => !b.startsWith("dealloc")), [
      "allocMinor d1 1",
      "allocMinor d1 2",
      "allocMinor d1 3",
      "allocMinor d1 4",
      "escaped d1 Boom",
      "allocMinor d1 5",
      "allocMinor d1 6",
      "escaped d1 Boom",
      "allocMinor d1 7",
      "allocMinor d0 8",
    ], JSON.stringify(opts));
    const raised = evs.flatMap((e) =>
      e.kind === "allocMinor" && typeof e.outcome === "object" ? [e.id] : []
    );
    assert.deepEqual(raised, [3, 6]);
  }
  // The program drains at the domain's end: the terminate step, and after a joined domain's
  // release.
  const { source } = exportOCaml(workerEndPending);
  assert.match(source, /tick_g \(\); resume_dom \(\); \(\* the domain's function returns/);
  assert.match(source, /wait_released 2;\n\s+resume_dom \(\);/);
});

Deno.test("the program records without polling: no loop in its recording or a profile's start", () => {
  const { source } = exportOCaml(recordWithoutPolls);
  for (
    const head of [
      "let[@inline never] record kind id =",
      "let[@inline never] record_alloc kind",
      "let rec record_loops ",
      "let rec record_frames ",
      "let start_0 () =",
    ]
  ) {
    assert.ok(!/\b(for|while)\b/.test(definition(source, head)), head);
  }
  for (const fn of ["record_loops", "record_frames"]) {
    // Its recursive call is not a tail call (a tail call to itself would poll).
    assert.match(
      definition(source, `let rec ${fn} `),
      new RegExp(`Sys\\.opaque_identity \\(${fn} `),
    );
  }
  // A None callback does not enter the runtime: the minor collection due after the unmarshalled
  // block's callback in iteration 147 happens at the next allocation, whose trigger is drawn
  // afterwards (OCaml 5.3.0 samples no block of iteration 147 after it).
  const at147 = events(recordWithoutPolls).filter((e) => e.loops[0] === 147);
  assert.deepEqual(at147.map((e) => e.kind === "allocMinor" ? `${e.size} ${e.source}` : e.kind), [
    "4 marshal",
  ]);
});

Deno.test("a systhread's program drains its pending callbacks before it ends, each raise logged", () => {
  const brief = events(threadEndPending).map((e) =>
    e.kind === "escaped" ? "escaped" : `${e.kind} ${"id" in e ? e.id : ""}`
  );
  // The six deallocations the thread's collection made ready all run at its end, two per
  // escape (caml_raise runs the next before raising), before the main thread's allocation.
  assert.deepEqual(brief.slice(6), [
    "deallocMinor 1",
    "deallocMinor 2",
    "escaped",
    "deallocMinor 3",
    "deallocMinor 4",
    "escaped",
    "deallocMinor 5",
    "deallocMinor 6",
    "escaped",
    "allocMinor 7",
    "allocMinor 8",
  ]);
  const { source } = exportOCaml(threadEndPending);
  assert.match(
    definition(source, "let[@inline never] run_thread_1 () ="),
    /resume_dom \(\);\n\s+th_end 1$/,
  );
});

// ---- 12. keep.steps blocks released by name ---------------------------------------------------

Deno.test("blocks of keep.steps released by name bring one poll, at the first of their steps", () => {
  const brief = events(namedReleaseDuePoll).map((e) => `${e.kind} ${"id" in e ? e.id : ""}`);
  // The runtime allocations' callbacks wait for Gc.minor: no poll at the second block's step.
  assert.deepEqual(brief, [
    "allocMinor 1",
    "allocMinor 2",
    "deallocMinor 1",
    "deallocMinor 2",
    "allocMinor 3",
    "deallocMinor 3",
    "allocMinor 4",
    "deallocMinor 4",
  ]);
  const rt = new Runtime({ minorHeapWords: 4096 });
  let step = 0;
  const lt = new Lifetimes(rt, () => step);
  const keep = lt.keeper({ kind: "steps", steps: 4, until: "b" })!;
  const addr = rt.mainDomain.alloc(1);
  keep(addr, 1); // due at step 5
  step = 2;
  keep(addr, 1); // due at step 7
  lt.release("b");
  const polls = [];
  for (let n = 1; n <= 8; n++) if (lt.tick(n)) polls.push(n);
  assert.deepEqual(polls, [5]);
  assert.equal(lt.nextDue, Infinity);
});

// ---- 13. config blocks of profiles -------------------------------------------------------------

Deno.test("a profile's config block costs 8 words while memprof's roots hold it, then 10 from the program's prof array", () => {
  // The mark work of a cycle started by Gc.full_major, with profiles started in slots of a
  // 2-slot array: p alone, or q stopped before p.
  const markWork = (both: boolean) => {
    const rt = new Runtime({ minorHeapWords: 8192 });
    const d = rt.mainDomain;
    const start = (slot: number) =>
      d.memprofStart({ samplingRate: 0.001, callstackSize: 0, tracker: {} }, { slot, slots: 2 });
    if (both) {
      start(0);
      d.memprofStop();
    }
    start(1);
    d.fullMajor();
    return rt.majorGc.state().markWork;
  };
  // q's config block reached by scanning (10), its boxed float (2), and the array's first
  // field: its darkening pushes its fields from the first holding a profile.
  assert.equal(markWork(true) - markWork(false), 13);
  assert.deepEqual(
    [...profileSlots(customCyclesStoppedProfiles).entries()],
    [["q1", 0], ["q2", 1], ["q3", 2], ["p", 3]],
  );
  const { source } = exportOCaml(customCyclesStoppedProfiles);
  assert.match(source, /\(\* profile "p" \*\)[^]*let start_3 \(\) =/);
});

// ---- 14. the threads library and systhreads ----------------------------------------------------

Deno.test("the harness's marking: the threads library's data and prelude, then 6 words per waiting systhread", () => {
  const params = (threads: number) => ({
    domains: 1,
    maxDepth: 1,
    profiles: 1,
    sites: [10],
    exceptions: 0,
    threads,
    fifoSites: [],
  });
  const mark = (threads: number, threadsLibrary: boolean) =>
    harnessMajorHeap(harnessBlocks(params(threads), [], { threadsLibrary }), 4096, {
      threadsLibrary,
    }).fixedMark!;
  // Measured on OCaml 5.3 (`Major slice` lines, OCAMLRUNPARAM=v=0x800): 507 words a cycle more
  // with the library and the prelude, 6 more per thread.
  assert.equal(mark(0, true) - mark(0, false), 507);
  assert.equal(mark(1, true) - mark(0, true), 6);
  assert.equal(mark(3, true) - mark(1, true), 12);
});

// ---- 15. a value built to be unmarshalled ------------------------------------------------------

Deno.test("a block of more than 256 words built and dropped at initialisation: allocated, never marked", () => {
  const p = { domains: 1, maxDepth: 1, profiles: 1, sites: [10], exceptions: 0 };
  const dead = harnessMajorHeap(
    harnessBlocks(p, [{ wosize: 300, fields: "ints", via: "dead" }]),
    4096,
  );
  const none = harnessMajorHeap(harnessBlocks(p, []), 4096);
  // The exported program of custom_cycles_marshal_build has it.
  const { source } = exportOCaml(customCyclesMarshalBuild);
  assert.match(source, /let sizes = \[\| 300 \|\] in[^]*Obj\.new_block 0 sizes\.\(i\)/);
  assert.equal(dead.fixedMark, none.fixedMark);
  assert.ok(dead.workAhead < none.workAhead, `${dead.workAhead} vs ${none.workAhead}`);
});

// ---- 19. the initial heap of programs with user events, or a value built to be marshalled ------

Deno.test("runtime_events.cmxa and each user event put the program's start further behind", () => {
  const p = { domains: 1, maxDepth: 1, profiles: 1, sites: [10], exceptions: 0 };
  const ahead = (events: boolean, userEvents: number) => {
    const extra = Array.from({ length: userEvents }, (_, k) => userEventBlocks(k === 0)).flat();
    return harnessMajorHeap(harnessBlocks(p, extra), 4096, { events }).workAhead;
  };
  // Measured with OCAMLRUNPARAM=v=0x800 on programs alike but for their user events: 68 words
  // of work behind with the library (116 less the marking of its data in the initialisation's
  // cycles), then 34, 32, 32 per event.
  assert.equal(ahead(false, 0) - ahead(true, 0), 68);
  assert.equal(ahead(true, 0) - ahead(true, 1), 34);
  assert.equal(ahead(true, 1) - ahead(true, 3), 64);
  const { source } = exportOCaml(userEventsInitWork);
  assert.equal(source.match(/= Runtime_events\.User\.register /g)?.length, 2);
});

Deno.test("a young block that a built value's major block links is promoted, then swept", () => {
  const p = { domains: 1, maxDepth: 1, profiles: 1, sites: [10], exceptions: 0 };
  const heap = (promoted: boolean) =>
    harnessMajorHeap(
      harnessBlocks(p, [
        { wosize: 294, fields: "ints", via: "dead" },
        { wosize: 99, fields: "ints", via: "dead", ...(promoted ? { promoted: true } : {}) },
      ]),
      4096,
    );
  assert.ok(heap(true).workAhead > heap(false).workAhead);
  assert.equal(heap(true).fixedMark, heap(false).fixedMark);
  const { source } = exportOCaml(customCyclesMarshalPromoted);
  assert.match(source, /let sizes = \[\| 294; 99 \|\] in/);
});

// ---- 20. a combined allocation's callback switching threads ----------------------------------

Deno.test("a thread run from a combined allocation's callback samples with its own callstack", () => {
  const allocs = events(comballocSwitchCallstack).filter((e) => e.kind === "allocMinor");
  // The fourth callback is the thread's block of 7 words, made while the main thread's third
  // component's callback waits; the main thread's blocks keep their site.
  const top = allocs.map((e) => "callstack" in e ? e.callstack[0] : "");
  assert.ok(allocs.length > 5, `${allocs.length} allocation callbacks`);
  assert.equal("size" in allocs[3] ? allocs[3].size : 0, 7);
  assert.equal(top[3], "Gen.site8@gen.ml:28:4-20");
  // The thread's keep.steps cell, allocated by the harness below the thread's program.
  assert.equal(top[4], "<harness>");
  for (const k of [0, 1, 2, ...top.keys().drop(5)]) {
    assert.equal(top[k], "Gen.site5@gen.ml:25:4-20", `callback ${k + 1}`);
  }
});

// ---- 21. a heap per domain ---------------------------------------------------------------------

Deno.test("a spawned domain's slice ends no cycle in the main domain's heap: 29 cycles, as OCaml 5.3", () => {
  const r = runScenario(spawnedDomainOwnHeap, {
    harnessFrames: HARNESS_FRAMES,
    exportHarness: true,
    majorHeap: exportOCaml(spawnedDomainOwnHeap).majorHeap,
  });
  // OCaml 5.3.0 ran its program with 31 minor collections and 29 major cycles; the simulation
  // with one heap for all domains, 32 and 30.
  assert.deepEqual([r.summary.minorCollections, r.summary.majorCycles], [31, 29]);
});

// ---- 22. the remembered set's promotion order --------------------------------------------------

Deno.test("the remembered set's order of promotion: 154 minor and 47 major collections, as OCaml 5.3", () => {
  const r = runScenario(rememberedSetOrder, {
    harnessFrames: HARNESS_FRAMES,
    exportHarness: true,
    majorHeap: exportOCaml(rememberedSetOrder).majorHeap,
  });
  // OCaml 5.3.0: 154 and 47; promoting in allocation order, 151 and 46.
  assert.deepEqual([r.summary.minorCollections, r.summary.majorCycles], [154, 47]);
});

// ---- 23. keep sites per step -------------------------------------------------------------------

Deno.test("a lifetime two steps share: each step keeps in its own site, as the program does", () => {
  const program = exportOCaml(foreverSharedSites);
  const sites = program.keepSites.get(keep.forever) ?? [];
  // The program's order: the main program's strings (400 slots), then the thread's pairs (8).
  assert.deepEqual(sites.map((s) => s.capacity), [400, 8]);
  assert.ok(sites.every((s) => s.owner !== undefined), "each site names its step");
  const out: RunEvent[] = [];
  const r = runScenario(foreverSharedSites, {
    onEvent: (e) => out.push(e),
    harnessFrames: HARNESS_FRAMES,
    exportHarness: true,
    majorHeap: program.majorHeap,
    keepSites: program.keepSites,
  });
  // OCaml 5.3.0: 21 minor collections, 5 major cycles, 35 major allocations sampled before the
  // first deallocation callback; with the sites taken in compile order, 22, 7 and 28.
  assert.deepEqual([r.summary.minorCollections, r.summary.majorCycles], [21, 5]);
  const first = out.findIndex((e) => e.kind === "deallocMajor");
  assert.equal(out.slice(0, first).filter((e) => e.kind === "allocMajor").length, 35);
});

// ---- 24. memprof's callstack arrays promoted ----------------------------------------------------

/** The events of `sc` run as its exported program runs (its heap and keep sites). */
function exportedRun(sc: Scenario): { events: RunEvent[]; r: ReturnType<typeof runScenario> } {
  const program = exportOCaml(sc);
  const out: RunEvent[] = [];
  const r = runScenario(sc, {
    onEvent: (e) => out.push(e),
    harnessFrames: HARNESS_FRAMES,
    exportHarness: true,
    majorHeap: program.majorHeap,
    keepSites: program.keepSites,
  });
  return { events: out, r };
}

Deno.test("memprof's callstack arrays held by entries are promoted: the words and the cycle's end OCaml 5.3 has", () => {
  const { events: out, r } = exportedRun(callstackPromoted);
  // OCaml 5.3.0's ring (the same program with runtime_events started) counts 206,453 words
  // promoted by its 233 minor collections; without the callstack arrays, the simulation
  // promoted 206,429 (4 arrays of 5 frames).
  assert.deepEqual([r.summary.minorCollections, r.summary.majorCycles], [233, 4]);
  assert.equal(r.gc.promotedWords, 206_453);
  // OCaml's callback 13,213: the fourth cycle's first deallocation, at iteration 11.1075 (the
  // simulation had an allocation callback there, its cycle ending later).
  assert.equal(out[13_212].kind, "deallocMajor");
  assert.deepEqual(out[13_212].loops, [11, 1075]);
});

// ---- 25. an unmarshalled value's local root ------------------------------------------------------

Deno.test("intern_end holds an unmarshalled value in one local root: the cycle's end OCaml 5.3 has", () => {
  const { events: out, r } = exportedRun(unmarshalValueLocalRoot);
  assert.deepEqual([r.summary.minorCollections, r.summary.majorCycles], [54, 46]);
  // OCaml's callbacks 3,087 and 3,088: a major allocation at iteration 4.2.2, then the cycle's
  // deallocations at 4.2.3 (the simulation ended the cycle at 4.2.2).
  assert.deepEqual([out[3086].kind, out[3086].loops], ["allocMajor", [4, 2, 2]]);
  assert.deepEqual([out[3087].kind, out[3087].loops], ["deallocMajor", [4, 2, 3]]);
});

Deno.test("the blocks an unmarshalled value's root holds are no slots: releasing them darkens nothing", () => {
  // keep.steps (with and without a name), keep.until, keep.forever and keep.list keep a value's
  // other blocks as reached through its root block: the program writes only the root's slot,
  // and its write barrier darkens only the root block (the ring's keeper already did so).
  for (
    const l of [
      { kind: "steps", steps: 1 },
      { kind: "steps", steps: 1, until: "v" },
      { kind: "until", name: "v" },
      { kind: "list", name: "v" },
    ] as const
  ) {
    const rt = new Runtime({ minorHeapWords: 4096 });
    const darkened: number[] = [];
    const barrier = rt.roots.onOverwrite;
    rt.roots.onOverwrite = (a) => {
      darkened.push(a);
      barrier?.(a);
    };
    let step = 0;
    const lt = new Lifetimes(rt, () => step, () => {}, () => ({ site: 0, capacity: 4 }));
    const keepIt = lt.keeper(l)!;
    const d = rt.mainDomain;
    const value = [d.alloc(3), d.alloc(4), d.alloc(5)];
    value.forEach((a, k) => keepIt(a, 3 + k, k > 0));
    if (l.kind !== "list") step = 2;
    lt.release("v");
    for (let n = 1; n <= 4; n++) lt.tick(n);
    assert.deepEqual(darkened, [value[0]], JSON.stringify(l));
  }
});

// ---- 26. compaction ------------------------------------------------------------------------------

Deno.test("blocks Gc.compact moved are swept once dead: 36 minor and 24 major collections, as OCaml 5.3", () => {
  // OCaml 5.3.0: 36 and 24; with the moved blocks never swept, 33 and 21.
  const { r } = exportedRun(compactedBlocksSwept);
  assert.deepEqual([r.summary.minorCollections, r.summary.majorCycles], [36, 24]);
});

Deno.test("Gc.compact repacks the pools: 42 minor and 21 major collections, as OCaml 5.3", () => {
  // OCaml 5.3.0: 42 and 21; without repacking the pools, 41 and 21 (and 41 and 20 with the
  // moved blocks never swept).
  const { r } = exportedRun(compactionRepacksPools);
  assert.deepEqual([r.summary.minorCollections, r.summary.majorCycles], [42, 21]);
});

// ---- 29. the minor heap's middle at initialisation -------------------------------------------

Deno.test("a user event's blocks take the initialisation past the minor heap's middle: 25 minor and 14 major collections, as OCaml 5.3", () => {
  // OCaml 5.3.0: 25 and 14; without the initialisation's minor heap filling, 26 and 15.
  const { r } = exportedRun(youngMidpointAtInit);
  assert.deepEqual([r.summary.minorCollections, r.summary.majorCycles], [25, 14]);
});

Deno.test("the initialisation's slice at the minor heap's middle ends a cycle: a cycle's work more done ahead", () => {
  // The same program with an 8,192-word minor heap never reaches its middle at initialisation;
  // with 4,096 words, its slice ends the cycle under way and Gc.full_major () runs three fresh
  // ones: the scenario starts more than a whole heap's work further ahead (OCaml 5.3.0's ring:
  // 275,765 words ahead with the user event, 182,135 without it, 89,120 heap words).
  const ahead = (minorHeapWords: number) =>
    exportOCaml({
      ...youngMidpointAtInit,
      settings: { ...youngMidpointAtInit.settings, minorHeapWords },
    }).majorHeap.workAhead;
  assert.ok(ahead(4096) - ahead(8192) > 89_120, `${ahead(4096)} vs ${ahead(8192)}`);
});

// ---- 30. a ring's slots promoted at their first store since the last collection ----------------

Deno.test("a ring's slots stored again are promoted at their first store: 413 minor and 23 major collections, as OCaml 5.3", () => {
  // OCaml 5.3.0: 413 and 23; promoting the slots in their creation order, 416 and 24.
  const { r } = exportedRun(ringSlotFirstStore);
  assert.deepEqual([r.summary.minorCollections, r.summary.majorCycles], [413, 23]);
});

// ---- 31. a marshalled value's blocks live while it is made ---------------------------------------

Deno.test("a marshalled value's blocks live while it is made: the scenario starts 277,987 words ahead, as OCaml 5.3", () => {
  // OCaml 5.3.0's debug runtime (`Updated major work`): the scenario's first slice finds the
  // work counter 277,987 words ahead of the allocation counter, after 95 words of work due;
  // the model without the value's blocks live: 264,811 (13,176 behind).
  const start = exportOCaml(marshalBuildLive).majorHeap;
  const { r } = exportedRun(marshalBuildLive);
  assert.deepEqual([r.summary.minorCollections, r.summary.majorCycles], [476, 21]);
  assert.equal(start.workAhead, 277_987);
});

Deno.test("a spawned domain's DLS array is promoted by the domain's last collection", () => {
  const evs = events(dlsAtTermination, { exportHarness: true });
  const dls = evs.find((e) => e.kind === "allocMinor" && e.domain === 1 && e.size === 8);
  assert.ok(dls !== undefined && "id" in dls, "the DLS array is sampled");
  const fate = evs.filter((e) => "id" in e && e.id === dls.id && e.kind !== "allocMinor");
  assert.deepEqual(fate.map((e) => e.kind), ["promote"]);
});

Deno.test("Domain.spawn with the threads library: the Random state split, the new domain's thread descriptor", () => {
  const evs = events(threadsDomainsSpawn, { exportHarness: true });
  const allocs = evs.flatMap((e) =>
    e.kind === "allocMinor"
      ? [`d${e.domain} ${e.size}${e.source === "custom" ? "c" : ""} ${e.callstack.length}`]
      : []
  );
  // After the main domain's own block: mk_default's [|4|], Bigarray (block, memory), State.set's
  // box; the split's [|4|] and Bigarray, its four boxes, State.set's; the KV pair, the cons
  // cell; then Domain.spawn's own (condition, mutex, term_sync, closure, result); the new
  // domain's thread descriptor (no OCaml frame) and DLS array. Depths count the main domain's 3
  // harness frames.
  assert.deepEqual(allocs.slice(1, 22), [
    "d0 1 9",
    "d0 6 9",
    "d0 4c 9",
    "d0 2 9",
    "d0 1 8",
    "d0 6 8",
    "d0 4c 8",
    "d0 2 7",
    "d0 2 7",
    "d0 2 7",
    "d0 2 7",
    "d0 2 8",
    "d0 2 6",
    "d0 2 5",
    "d0 2 4",
    "d0 2 4",
    "d0 3 4",
    "d0 5 4",
    "d0 2 4",
    "d1 2 0",
    "d1 3 0",
  ]);
});

Deno.test("every module of tests/differential/regressions/ is one of the regressions run", async () => {
  const dir = new URL("./regressions/", import.meta.url);
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (e.isFile && e.name.endsWith(".ts")) {
      names.push((await import(new URL(e.name, dir).href)).default.settings.name);
    }
  }
  assert.deepEqual(names.sort(), regressions.map((sc) => sc.settings.name).sort());
});

// ---- the real runtime ---------------------------------------------------------------------------

const cacheDir = DIFF_CACHE;
const skip = DIFF_SKIP;
if (skip !== undefined) {
  skipNotice(`issue 22's ${regressions.length} regression programs on the real OCaml 5.3`, skip);
}

for (const sc of regressions) {
  const name = sc.settings.name;
  Deno.test({
    name: `${name}: OCaml 5.3 runs its exported program as the simulation does`,
    ignore: skip !== undefined,
    async fn() {
      // Its export once looped for ever: ask a worker first, which gives up after a while.
      if (sc === harnessHeapSlices) await inWorker({ kind: "export" }, 60);
      const r = await diffScenario(sc, {
        ocamlopt: REAL_OCAML.toolchain!.ocamlopt,
        cacheDir: cacheDir!,
        rings: "never",
      });
      if (r.status === "error" || r.status === "not exportable") {
        assert.fail(`${name}: ${r.status === "error" ? r.message : `not exportable: ${r.reason}`}`);
      }
      const d = r.comparison.difference;
      assert.equal(
        d,
        undefined,
        [`${name}: ${differenceSummary(r.comparison)}`, ...(d ? differenceContext(d) : [])]
          .join("\n"),
      );
      assert.ok(r.callbacks.sim > 0, `${name}: no callbacks`);
    },
  });
}
