/**
 * The scenario schema, written once: the names and keys of every tagged object and options
 * object of the DSL, as `as const` tables. spec.ts takes its name unions from them
 * ({@linkcode GC_KINDS}, {@linkcode ALLOC_SOURCES}), the validator and the builder check objects
 * against them, and the type checker proves each table and spec.ts's types agree: a tag or a
 * key added to one and not the other does not compile (see {@linkcode TableAgrees} and the
 * checks at the end of this file).
 * @module
 */
import type {
  CallbackAction,
  CallbackSpec,
  Lifetime,
  ProfileSpec,
  ScenarioSettings,
  TrackerSpec,
  Trigger,
  UserEventSpec,
} from "./spec.ts";
import type { AllocOptions, CombinedOptions, StartArgs } from "./builder.ts";

/** Kinds of explicit collection (spec.ts `GcKind`). */
export const GC_KINDS = ["minor", "majorSlice", "major", "fullMajor", "compact"] as const;

/** Where a block comes from (spec.ts `AllocSource`):
 * - `caml`: allocated inline by OCaml code (minor heap if ≤ 256 words; sampled by the trigger);
 * - `runtime`: by a C primitive in the runtime (`from_caml` false; callback at the next poll);
 * - `array`: `Array.make`, a runtime allocation (major heap above 256 words), then pending
 *   actions;
 * - `major`: directly in the major heap (`caml_alloc_shr`);
 * - `custom`: a custom block with out-of-heap memory (`caml_alloc_custom_mem`);
 * - `unmarshal`: the result of unmarshalling a one-block value (see the `unmarshal` step for
 *   more blocks). */
export const ALLOC_SOURCES = ["caml", "runtime", "array", "major", "custom", "unmarshal"] as const;

/** The keys of each lifetime, by its `kind` (spec.ts `Lifetime`). */
export const LIFETIME_KEYS = {
  drop: ["kind"],
  forever: ["kind"],
  steps: ["kind", "steps", "until"],
  until: ["kind", "name"],
  list: ["kind", "name"],
  ring: ["kind", "slots", "name"],
  cycle: ["kind", "lifetimes"],
} as const;

/** The keys of each callback action, by its `kind` (spec.ts `CallbackAction`). */
export const ACTION_KEYS = {
  raise: ["kind", "exn"],
  stop: ["kind"],
  start: ["kind", "profile"],
  discard: ["kind"],
  alloc: ["kind", "words", "lifetime"],
  gc: ["kind", "what"],
  switchThread: ["kind", "thread"],
  exitThread: ["kind"],
  yieldTo: ["kind", "thread"],
  yieldToNext: ["kind", "threads"],
} as const;

/** The keys of each action trigger, by its `kind` (spec.ts `Trigger`). */
export const TRIGGER_KEYS = {
  nth: ["kind", "n"],
  every: ["kind", "period", "offset"],
  always: ["kind"],
} as const;

/** The keys of each user event payload, by its `type` (spec.ts `UserEventSpec`). */
export const EVENT_KEYS = {
  unit: ["type"],
  int: ["type", "value"],
  span: ["type", "phase"],
  custom: ["type", "bytes"],
} as const;

/** Keys of each options object of the DSL (docs/scenarios.md lists them with examples). */
export const OPTION_KEYS = {
  settings: [
    "name",
    "description",
    "seed",
    "samplingRate",
    "callstackSize",
    "minorHeapWords",
    "ringLog2",
    "clockTickNs",
    "maxDomains",
    "pid",
    "externalSamplingRate",
    "log",
    "gcTime",
  ],
  alloc: ["lifetime", "source", "at", "customMem"],
  allocCombined: ["lifetime", "at"],
  unmarshal: ["lifetime", "at"],
  profile: ["name", "samplingRate", "callstackSize", "tracker"],
  tracker: ["allocMinor", "allocMajor", "promote", "deallocMinor", "deallocMajor"],
  callback: ["result", "actions"],
  actionEntry: ["when", "action"],
} as const;

// ---- the proofs ----------------------------------------------------------------------------

/** `true` when string unions `A` and `B` are the same, else `false`. */
export type SameKeys<A extends string, B extends string> = [A] extends [B]
  ? ([B] extends [A] ? true : false)
  : false;

/** `true` when `Table` lists, for each member of union `U` by its tag `Tag`, exactly that
 * member's keys, and has no other tag; else `false`. */
export type TableAgrees<
  Table extends Readonly<Record<string, readonly string[]>>,
  U,
  Tag extends keyof U,
> = SameKeys<keyof Table & string, U[Tag] & string> extends true ? (
    {
      [K in keyof Table & string]: SameKeys<
        Table[K][number],
        keyof Extract<U, Readonly<Record<Tag, K>>> & string
      >;
    }[keyof Table & string] extends true ? true
      : false
  )
  : false;

/** Compiles only when `proof` is `true`. */
function proven(_proof: true): void {}

// Each table and the type it describes, both ways. A failure here reads "Argument of type
// 'false' is not assignable to parameter of type 'true'": the table and spec.ts disagree.
proven(true satisfies TableAgrees<typeof LIFETIME_KEYS, Lifetime, "kind">);
proven(true satisfies TableAgrees<typeof ACTION_KEYS, CallbackAction, "kind">);
proven(true satisfies TableAgrees<typeof TRIGGER_KEYS, Trigger, "kind">);
proven(true satisfies TableAgrees<typeof EVENT_KEYS, UserEventSpec, "type">);
proven(true satisfies SameKeys<typeof OPTION_KEYS.settings[number], keyof ScenarioSettings>);
proven(true satisfies SameKeys<typeof OPTION_KEYS.alloc[number], keyof AllocOptions>);
proven(true satisfies SameKeys<typeof OPTION_KEYS.allocCombined[number], keyof CombinedOptions>);
proven(true satisfies SameKeys<typeof OPTION_KEYS.profile[number], keyof StartArgs>);
proven(true satisfies SameKeys<typeof OPTION_KEYS.profile[number], keyof ProfileSpec>);
proven(true satisfies SameKeys<typeof OPTION_KEYS.tracker[number], keyof TrackerSpec>);
proven(true satisfies SameKeys<typeof OPTION_KEYS.callback[number], keyof CallbackSpec>);
proven(
  true satisfies SameKeys<
    typeof OPTION_KEYS.actionEntry[number],
    keyof CallbackSpec["actions"][number]
  >,
);
