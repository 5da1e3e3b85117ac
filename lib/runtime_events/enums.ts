/**
 * Enumerations of OCaml 5.3's runtime_events, with the exact ordinals the C
 * runtime writes into the ring and the names OCaml's consumer library prints.
 *
 * The ordinals follow the 5.3 release branch (5.3.0+dev4). Later OCaml
 * versions reorder or extend some of these, so never renumber them.
 *
 * @module
 */

/** Event category bit of the header word: runtime (0) or user (1). */
export const EventCategory = {
  EV_RUNTIME: 0,
  EV_USER: 1,
} as const;
/** A value of {@linkcode EventCategory}. */
export type EventCategory = typeof EventCategory[keyof typeof EventCategory];

/**
 * Message types of runtime events (the 4-bit "type" field of a header word
 * when the user bit is clear). `EV_INTERNAL` with id 0 is the padding message.
 */
export const RuntimeMessageType = {
  EV_INTERNAL: 0,
  EV_LIFECYCLE: 1,
  EV_BEGIN: 2,
  EV_EXIT: 3,
  EV_COUNTER: 4,
  EV_ALLOC: 5,
  EV_FLUSH: 6,
} as const;
/** A value of {@linkcode RuntimeMessageType}. */
export type RuntimeMessageType = typeof RuntimeMessageType[keyof typeof RuntimeMessageType];

/** Message types of user events (the "type" field when the user bit is set). */
export const UserMessageType = {
  EV_USER_MSG_TYPE_UNIT: 0,
  EV_USER_MSG_TYPE_INT: 1,
  EV_USER_MSG_TYPE_SPAN_BEGIN: 2,
  EV_USER_MSG_TYPE_SPAN_END: 3,
  EV_USER_MSG_TYPE_CUSTOM: 4,
} as const;
/** A value of {@linkcode UserMessageType}. */
export type UserMessageType = typeof UserMessageType[keyof typeof UserMessageType];

/** The OCaml-side types of user events (`Runtime_events.Type`). */
export const UserMlType = {
  EV_USER_ML_TYPE_UNIT: 0,
  EV_USER_ML_TYPE_INT: 1,
  EV_USER_ML_TYPE_SPAN: 2,
  EV_USER_ML_TYPE_CUSTOM: 3,
} as const;
/** A value of {@linkcode UserMlType}. */
export type UserMlType = typeof UserMlType[keyof typeof UserMlType];

/** Span boundaries passed to user span callbacks. */
export const UserSpan = {
  EV_USER_SPAN_BEGIN: 0,
  EV_USER_SPAN_END: 1,
} as const;
/** A value of {@linkcode UserSpan}. */
export type UserSpan = typeof UserSpan[keyof typeof UserSpan];

/** Lifecycle events (`ev_lifecycle`). */
export const Lifecycle = {
  EV_RING_START: 0,
  EV_RING_STOP: 1,
  EV_RING_PAUSE: 2,
  EV_RING_RESUME: 3,
  EV_FORK_PARENT: 4,
  EV_FORK_CHILD: 5,
  EV_DOMAIN_SPAWN: 6,
  EV_DOMAIN_TERMINATE: 7,
} as const;
/** A value of {@linkcode Lifecycle}. */
export type Lifecycle = typeof Lifecycle[keyof typeof Lifecycle];

/** Runtime phases (`ev_runtime_phase`), as numbered in OCaml 5.3. */
export const RuntimePhase = {
  EV_EXPLICIT_GC_SET: 0,
  EV_EXPLICIT_GC_STAT: 1,
  EV_EXPLICIT_GC_MINOR: 2,
  EV_EXPLICIT_GC_MAJOR: 3,
  EV_EXPLICIT_GC_FULL_MAJOR: 4,
  EV_EXPLICIT_GC_COMPACT: 5,
  EV_MAJOR: 6,
  EV_MAJOR_SWEEP: 7,
  EV_MAJOR_MARK_ROOTS: 8,
  EV_MAJOR_MEMPROF_ROOTS: 9,
  EV_MAJOR_MARK: 10,
  EV_MINOR: 11,
  EV_MINOR_LOCAL_ROOTS: 12,
  EV_MINOR_MEMPROF_ROOTS: 13,
  EV_MINOR_MEMPROF_CLEAN: 14,
  EV_MINOR_FINALIZED: 15,
  EV_EXPLICIT_GC_MAJOR_SLICE: 16,
  EV_FINALISE_UPDATE_FIRST: 17,
  EV_FINALISE_UPDATE_LAST: 18,
  EV_INTERRUPT_REMOTE: 19,
  EV_MAJOR_EPHE_MARK: 20,
  EV_MAJOR_EPHE_SWEEP: 21,
  EV_MAJOR_FINISH_MARKING: 22,
  EV_MAJOR_GC_CYCLE_DOMAINS: 23,
  EV_MAJOR_GC_PHASE_CHANGE: 24,
  EV_MAJOR_GC_STW: 25,
  EV_MAJOR_MARK_OPPORTUNISTIC: 26,
  EV_MAJOR_SLICE: 27,
  EV_MAJOR_FINISH_CYCLE: 28,
  EV_MINOR_CLEAR: 29,
  EV_MINOR_FINALIZERS_OLDIFY: 30,
  EV_MINOR_GLOBAL_ROOTS: 31,
  EV_MINOR_LEAVE_BARRIER: 32,
  EV_STW_API_BARRIER: 33,
  EV_STW_HANDLER: 34,
  EV_STW_LEADER: 35,
  EV_MAJOR_FINISH_SWEEPING: 36,
  EV_MAJOR_MEMPROF_CLEAN: 37,
  EV_MINOR_FINALIZERS_ADMIN: 38,
  EV_MINOR_REMEMBERED_SET: 39,
  EV_MINOR_REMEMBERED_SET_PROMOTE: 40,
  EV_MINOR_LOCAL_ROOTS_PROMOTE: 41,
  EV_DOMAIN_CONDITION_WAIT: 42,
  EV_DOMAIN_RESIZE_HEAP_RESERVATION: 43,
  EV_COMPACT: 44,
  EV_COMPACT_EVACUATE: 45,
  EV_COMPACT_FORWARD: 46,
  EV_COMPACT_RELEASE: 47,
} as const;
/** A value of {@linkcode RuntimePhase}. */
export type RuntimePhase = typeof RuntimePhase[keyof typeof RuntimePhase];

/** Runtime counters (`ev_runtime_counter`), as numbered in OCaml 5.3. */
export const RuntimeCounter = {
  EV_C_FORCE_MINOR_ALLOC_SMALL: 0,
  EV_C_FORCE_MINOR_MAKE_VECT: 1,
  EV_C_FORCE_MINOR_SET_MINOR_HEAP_SIZE: 2,
  EV_C_FORCE_MINOR_MEMPROF: 3,
  EV_C_MINOR_PROMOTED: 4,
  EV_C_MINOR_ALLOCATED: 5,
  EV_C_REQUEST_MAJOR_ALLOC_SHR: 6,
  EV_C_REQUEST_MAJOR_ADJUST_GC_SPEED: 7,
  EV_C_REQUEST_MINOR_REALLOC_REF_TABLE: 8,
  EV_C_REQUEST_MINOR_REALLOC_EPHE_REF_TABLE: 9,
  EV_C_REQUEST_MINOR_REALLOC_CUSTOM_TABLE: 10,
  EV_C_MAJOR_HEAP_POOL_WORDS: 11,
  EV_C_MAJOR_HEAP_POOL_LIVE_WORDS: 12,
  EV_C_MAJOR_HEAP_LARGE_WORDS: 13,
  EV_C_MAJOR_HEAP_POOL_FRAG_WORDS: 14,
  EV_C_MAJOR_HEAP_POOL_LIVE_BLOCKS: 15,
  EV_C_MAJOR_HEAP_LARGE_BLOCKS: 16,
  EV_C_MAJOR_HEAP_WORDS: 17,
  EV_C_MAJOR_ALLOCATED_WORDS: 18,
  EV_C_MAJOR_ALLOCATED_WORK: 19,
  EV_C_MAJOR_DEPENDENT_WORK: 20,
  EV_C_MAJOR_EXTRA_WORK: 21,
  EV_C_MAJOR_WORK_COUNTER: 22,
  EV_C_MAJOR_ALLOC_COUNTER: 23,
  EV_C_MAJOR_SLICE_TARGET: 24,
  EV_C_MAJOR_SLICE_BUDGET: 25,
} as const;
/** A value of {@linkcode RuntimeCounter}. */
export type RuntimeCounter = typeof RuntimeCounter[keyof typeof RuntimeCounter];

/**
 * Printed names of phases, indexed by ordinal. Most are the lower-cased
 * constructor without `EV_`, but the compaction phases print as
 * `compaction…`, exactly as `Runtime_events.runtime_phase_name` does.
 */
export const PHASE_NAMES: readonly string[] = Object.freeze([
  "explicit_gc_set",
  "explicit_gc_stat",
  "explicit_gc_minor",
  "explicit_gc_major",
  "explicit_gc_full_major",
  "explicit_gc_compact",
  "major",
  "major_sweep",
  "major_mark_roots",
  "major_memprof_roots",
  "major_mark",
  "minor",
  "minor_local_roots",
  "minor_memprof_roots",
  "minor_memprof_clean",
  "minor_finalized",
  "explicit_gc_major_slice",
  "finalise_update_first",
  "finalise_update_last",
  "interrupt_remote",
  "major_ephe_mark",
  "major_ephe_sweep",
  "major_finish_marking",
  "major_gc_cycle_domains",
  "major_gc_phase_change",
  "major_gc_stw",
  "major_mark_opportunistic",
  "major_slice",
  "major_finish_cycle",
  "minor_clear",
  "minor_finalizers_oldify",
  "minor_global_roots",
  "minor_leave_barrier",
  "stw_api_barrier",
  "stw_handler",
  "stw_leader",
  "major_finish_sweeping",
  "major_memprof_clean",
  "minor_finalizers_admin",
  "minor_remembered_set",
  "minor_remembered_set_promote",
  "minor_local_roots_promote",
  "domain_condition_wait",
  "domain_resize_heap_reservation",
  "compaction",
  "compaction_evacuate",
  "compaction_forward",
  "compaction_release",
]);

/** Printed names of counters, indexed by ordinal (constructor without `EV_C_`). */
export const COUNTER_NAMES: readonly string[] = Object.freeze([
  "force_minor_alloc_small",
  "force_minor_make_vect",
  "force_minor_set_minor_heap_size",
  "force_minor_memprof",
  "minor_promoted",
  "minor_allocated",
  "request_major_alloc_shr",
  "request_major_adjust_gc_speed",
  "request_minor_realloc_ref_table",
  "request_minor_realloc_ephe_ref_table",
  "request_minor_realloc_custom_table",
  "major_heap_pool_words",
  "major_heap_pool_live_words",
  "major_heap_large_words",
  "major_heap_pool_frag_words",
  "major_heap_pool_live_blocks",
  "major_heap_large_blocks",
  "major_heap_words",
  "major_allocated_words",
  "major_allocated_work",
  "major_dependent_work",
  "major_extra_work",
  "major_work_counter",
  "major_alloc_counter",
  "major_slice_target",
  "major_slice_budget",
]);

/** Printed names of lifecycle events, indexed by ordinal. */
export const LIFECYCLE_NAMES: readonly string[] = Object.freeze([
  "ring_start",
  "ring_stop",
  "ring_pause",
  "ring_resume",
  "fork_parent",
  "fork_child",
  "domain_spawn",
  "domain_terminate",
]);

/**
 * The name OCaml prints for phase `n`. Ordinals outside 5.3's enum (only found
 * in corrupt or newer files) print as `unknown_phase_<n>` instead of failing.
 */
export function phaseName(n: number): string {
  return PHASE_NAMES[n] ?? `unknown_phase_${n}`;
}

/** The name OCaml prints for counter `n` (`unknown_counter_<n>` if out of range). */
export function counterName(n: number): string {
  return COUNTER_NAMES[n] ?? `unknown_counter_${n}`;
}

/** The name OCaml prints for lifecycle event `n` (`unknown_lifecycle_<n>` if out of range). */
export function lifecycleName(n: number): string {
  return LIFECYCLE_NAMES[n] ?? `unknown_lifecycle_${n}`;
}

/** Number of allocation-size buckets in an `EV_ALLOC` message. */
export const NUM_ALLOC_BUCKETS = 20;
