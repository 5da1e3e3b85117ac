/**
 * The harness's tables, described once: for each global the prelude (lib/export/_prelude.ts)
 * declares that allocates a block and keeps it, its OCaml declaration, the blocks it allocates
 * (lib/export/_harness_heap.ts, `harnessBlocks`: the major heap's pacing at the scenario's start)
 * and its place in the module's marking layout (`harnessMarkLayout`). The prelude writes each
 * declaration from here, and the heap model reads the same entries, so that the two cannot
 * drift apart (tests/export/harness_tables_test.ts reads the written prelude back against them;
 * tests/export/harness_heap_real_test.ts compares the model's heap with the real program's).
 * @module
 */
import type { HarnessBlock } from "./_harness_heap.ts";

/** What the tables' sizes depend on (lib/export/_prelude.ts, `PreludeParams`). */
export interface HarnessShape {
  /** Number of domains the scenario names (main first). */
  readonly domains: number;
  /** Deepest loop nesting on any domain. */
  readonly maxDepth: number;
  /** Profile slots (one per profile name). */
  readonly profiles: number;
  /** Keep-site capacities, by site. */
  readonly sites: readonly number[];
  /** Number of distinct exceptions callbacks raise. */
  readonly exceptions: number;
  /** Number of systhreads with programs of their own (none if absent). */
  readonly threads?: number;
  /** How many of them the program's initialisation creates (the main domain's, first); the
   * others, a spawned domain's, are created by their domain during the run. Default: all. */
  readonly initThreads?: number;
  /** The domains (by number) whose main threads pass the baton of their domain's threads with
   * programs: each has a thread number after those threads (none if absent). */
  readonly batonOrds?: readonly number[];
  /** The domain (by number) of each thread with a program, thread 1 first (with
   * `batonOrds`). */
  readonly threadDomains?: readonly number[];
  /** Sites kept for a number of steps (none if absent). */
  readonly fifoSites?: readonly number[];
  /** The scenario's seed, which `rng` starts from (0 if absent; it sizes nothing). */
  readonly seed?: number;
}

/** Builds a program module's marking layout (lib/runtime/_mark.ts, `ProgramMarkLayout`): its
 * globals in field order, the blocks they reach, and the systhreads' blocks. */
export class LayoutBuilder {
  /** The module's global blocks. */
  readonly globals: string[] = [];
  /** The blocks the globals reach. */
  readonly blocks: string[] = [];
  /** Each systhread's descriptor and condition (block numbers). */
  readonly threads: { descriptor: number; cond: number }[] = [];
  /** The threads' conditions (block numbers), the main thread's first. */
  conds: number[] = [];
  /** Each spawned domain's handle and result (block numbers), from domain 1. */
  readonly domains: { handle: number; finished: number }[] = [];

  /** Adds a block; returns its reference (`bK`). */
  block(text: string): string {
    return `b${this.blocks.push(text) - 1}`;
  }
}

/** A table of the harness (see the module doc). */
export interface HarnessTable {
  /** Its OCaml name. */
  readonly name: string;
  /** Declared by the systhreads' part of the prelude (`threadsPrelude`), linked only with the
   * threads library. */
  readonly threadsOnly?: true;
  /** Declared by the counted waits' part of the prelude (`countedWaitsPrelude`): with the
   * threads library and several domains. */
  readonly countedOnly?: true;
  /** Its declaration, as the prelude writes it. */
  decl(p: HarnessShape): string;
  /** The blocks it allocates and keeps, in the order it allocates them. */
  blocks(p: HarnessShape): HarnessBlock[];
  /** Its part of the marking layout (nothing for a block whose darkening pushes nothing and
   * that reaches nothing: a reference, a mutex or a condition of its own). */
  layout(p: HarnessShape, lay: LayoutBuilder): void;
}

const root = (wosize: number, fields: HarnessBlock["fields"]): HarnessBlock => ({
  wosize,
  fields,
  via: "root",
});
/** Layout of an array of `n` immediates. */
export const ints = (n: number): string => `${n} 0 0 | i*${n}`;
const slotsOf = (p: HarnessShape) => Math.max(1, p.profiles);
const threadsOf = (p: HarnessShape) => (p.threads ?? 0) + (p.batonOrds?.length ?? 0) + 1;
/** The threads the program's initialisation creates. */
const initThreadsOf = (p: HarnessShape) => p.initThreads ?? p.threads ?? 0;

/** The thread numbers of each spawned domain that has threads with programs, which share that
 * domain's mutex (`th_lock`): its threads', then its main thread's. */
export function lockGroups(p: HarnessShape): number[][] {
  const ords = p.batonOrds ?? [];
  if (ords.length === 0) return [];
  const threads = p.threads ?? 0;
  return ords.map((ord, i) => [
    ...(p.threadDomains ?? []).flatMap((o, k) => o === ord ? [k + 1] : []),
    threads + 1 + i,
  ]);
}

/** An array of `size(p)` immediates initialised to `init`, declared `let name = Array.make …`. */
function intArray(
  name: string,
  sizeText: (p: HarnessShape) => string,
  size: (p: HarnessShape) => number,
  init = "0",
  extra: { readonly threadsOnly?: true } = {},
): HarnessTable {
  return {
    name,
    ...extra,
    decl: (p) => `let ${name} = Array.make ${sizeText(p)} ${init}`,
    blocks: (p) => [root(size(p), "ints")],
    layout: (p, lay) => void lay.globals.push(ints(size(p))),
  };
}

/** What `Array.map (fun n -> Array.make (max n 1) …) site_capacity` allocates, in its order:
 * the first site's array, then the result array (`Array.map` creates it from its first
 * element), then the other sites' arrays. */
function mapped(p: HarnessShape, fields: "pointers" | "ints"): HarnessBlock[] {
  const site = (n: number, mapIndex: number): HarnessBlock => ({
    wosize: Math.max(n, 1),
    fields,
    via: "scan",
    mapIndex,
  });
  const [first, ...rest] = p.sites;
  return first === undefined
    ? []
    : [site(first, 0), root(p.sites.length, "pointers"), ...rest.map((n, k) => site(n, k + 1))];
}

/** A thread table: one immediate per thread (the main thread's first). */
const threadInts = (name: string, init = "0"): HarnessTable =>
  intArray(name, (p) => `${threadsOf(p)}`, threadsOf, init, { threadsOnly: true });

/** A reference to an immediate, declared `let name = ref init`: one field, which its darkening
 * does not push. */
const refCell = (name: string, init: (p: HarnessShape) => string): HarnessTable => ({
  name,
  decl: (p) => `let ${name} = ref ${init(p)}`,
  blocks: () => [root(1, "ints")],
  layout: () => {},
});

/** A mutex or a condition variable of the baton: a custom block of two fields (its operations
 * and the pointer to the C object), nothing to scan. */
const syncValue = (name: string, module: "Mutex" | "Condition"): HarnessTable => ({
  name,
  decl: () => `let ${name} = ${module}.create ()`,
  blocks: () => [root(2, "noscan")],
  layout: () => {},
});

/** An array of `n` condition variables, as OCaml text. */
const conditionArray = (n: number) => `Array.init ${n} (fun _ -> Condition.create ())`;

/** What {@linkcode conditionArray} keeps, as the heap model counts it: the array, the first
 * condition (made before the array, which reaches it), then the others. */
function conditionArrayBlocks(n: number): HarnessBlock[] {
  const out: HarnessBlock[] = [root(n, "pointers"), { wosize: 2, fields: "noscan", via: "scan" }];
  for (let k = 1; k < n; k++) out.push(root(2, "noscan"));
  return out;
}

/** The tables, in the order the program allocates them (the prelude's, then its systhreads'
 * part); {@linkcode HARNESS_TABLE} finds one by name. */
export const HARNESS_TABLES: readonly HarnessTable[] = [
  refCell("log_n", () => "0"),
  refCell("log_overflow", () => "false"),
  refCell("frozen", () => "false"),
  refCell("serial", () => "0"),
  intArray(
    "loops",
    (p) => `(${p.domains + (p.threads ?? 0)} * (max_depth + 1))`,
    (p) => (p.domains + (p.threads ?? 0)) * (p.maxDepth + 1),
  ),
  intArray("ord_of_index", () => "256", () => 256),
  refCell("step", () => "0"),
  {
    // An array literal is copied when evaluated (arrays are mutable); the empty one is the
    // static atom.
    name: "site_capacity",
    decl: (p) =>
      `let site_capacity = ${p.sites.length === 0 ? "[||]" : `[| ${p.sites.join("; ")} |]`}`,
    blocks: (p) => p.sites.length === 0 ? [] : [root(p.sites.length, "ints")],
    layout: (p, lay) => {
      if (p.sites.length > 0) lay.globals.push(ints(p.sites.length));
    },
  },
  {
    name: "ks",
    decl: () => "let ks = Array.map (fun n -> Array.make (max n 1) (Obj.repr 0)) site_capacity",
    blocks: (p) => mapped(p, "pointers"),
    layout: (p, lay) => {
      const ns = p.sites.length;
      if (ns > 0) lay.globals.push(`${ns} 0 0 | ${p.sites.map((_, s) => `k${s}`).join(" ")}`);
    },
  },
  {
    name: "kd",
    decl: () => "let kd = Array.map (fun n -> Array.make (max n 1) 0) site_capacity",
    blocks: (p) => mapped(p, "ints"),
    layout: (p, lay) => {
      const ns = p.sites.length;
      if (ns > 0) {
        lay.globals.push(
          `${ns} 0 0 | ${p.sites.map((n) => lay.block(ints(Math.max(n, 1)))).join(" ")}`,
        );
      }
    },
  },
  intArray("kh", () => "(Array.length site_capacity + 1)", (p) => p.sites.length + 1),
  intArray("kt", () => "(Array.length site_capacity + 1)", (p) => p.sites.length + 1),
  {
    name: "fifo_sites",
    decl: (p) => {
      const f = p.fifoSites ?? [];
      return `let fifo_sites = ${f.length === 0 ? "[||]" : `[| ${f.join("; ")} |]`}`;
    },
    blocks: (p) => (p.fifoSites?.length ?? 0) === 0 ? [] : [root(p.fifoSites!.length, "ints")],
    layout: (p, lay) => {
      const fifo = p.fifoSites?.length ?? 0;
      if (fifo > 0) lay.globals.push(ints(fifo));
    },
  },
  refCell("next_due", () => "max_int"),
  {
    // Each slot the config block of the profile the program keeps there, if any.
    name: "prof",
    decl: (p) => `let prof = Array.make ${slotsOf(p)} (Obj.repr 0)`,
    blocks: (p) => [root(slotsOf(p), "ints")],
    layout: (p, lay) => {
      const slots = slotsOf(p);
      lay.globals.push(
        `${slots} 0 0 | ${Array.from({ length: slots }, (_, j) => `p${j}`).join(" ")}`,
      );
    },
  },
  intArray("calls", (p) => `(${slotsOf(p)} * 5)`, (p) => slotsOf(p) * 5),
  {
    // The main domain's slot holds 0, the others' handles once spawned (`dK`, read when
    // marking reaches the array): stdlib/domain.ml's `{ domain; term_sync }`, term_sync its
    // `{ state; mut; cond }` (the mutex and the condition custom blocks of 2 words), whose state
    // is `Running` until the domain ends, then `Finished (Ok ())` (`eK`; domain.c,
    // make_finished). The blocks themselves are the simulation's (lib/scenario/engine/
    // _compile_domains.ts), kept alive there; these are what marking them costs.
    name: "doms",
    decl: (p) => `let doms = Array.make ${p.domains} (Obj.repr 0)`,
    blocks: (p) => [root(p.domains, "ints")],
    layout: (p, lay) => {
      for (let k = 1; k < p.domains; k++) {
        const ok = lay.block("1 0 0 | i");
        const finished = lay.blocks.push(`1 0 0 | ${ok}`) - 1;
        const sync = `3 0 0 | e${k} ${lay.block("2 255 0")} ${lay.block("2 255 0")}`;
        const handle = lay.blocks.push(`2 0 0 | i ${lay.block(sync)}`) - 1;
        lay.domains.push({ handle, finished });
      }
      const slots = Array.from({ length: p.domains - 1 }, (_, k) => ` d${k + 1}`).join("");
      lay.globals.push(`${p.domains} 0 0 | i${slots}`);
    },
  },
  intArray("started", (p) => `${p.domains}`, (p) => p.domains),
  {
    // Weak.create: an ephemeron (caml_ephe_create) of one key, which caml_alloc_shr puts
    // straight into the major heap, whatever its size: 3 fields (link, data, key), nothing
    // for marking to scan (the ephemerons' own phase handles it).
    name: "empty_weak",
    decl: () => "let empty_weak : int Weak.t = Weak.create 1",
    blocks: () => [{ wosize: 3, fields: "noscan", via: "root", direct: true, ephemeron: true }],
    layout: () => {},
  },
  refCell("rng", (p) => `${(p.seed ?? 0) >>> 0}`),
  refCell("turn", () => "0"),
  syncValue("baton", "Mutex"),
  syncValue("baton_moved", "Condition"),
  intArray("released", (p) => `${p.domains}`, (p) => p.domains),
  {
    name: "th_turn",
    threadsOnly: true,
    decl: () => "let th_turn = ref 0",
    blocks: () => [root(1, "ints")],
    layout: () => {},
  },
  {
    // The threads' conditions (custom blocks): the main thread's is reached by scanning
    // th_cond; each other thread's is on its stack as it waits on it (Condition.wait in
    // th_wait), darkened with the stacks before marking scans anything, at no cost (nothing to
    // scan).
    name: "th_cond",
    threadsOnly: true,
    decl: (p) => `let th_cond = ${conditionArray(threadsOf(p))}`,
    blocks: (p) => conditionArrayBlocks(threadsOf(p)),
    layout: (p, lay) => {
      const n = threadsOf(p);
      lay.conds = Array.from({ length: n }, () => lay.blocks.push("2 255 0") - 1);
      lay.globals.push(`${n} 0 0 | ${lay.conds.map((b) => `b${b}`).join(" ")}`);
    },
  },
  threadInts("th_handed_by"),
  threadInts("th_joiner", "(-1)"),
  threadInts("th_ended"),
  threadInts("th_spawned"),
  threadInts("th_joining"),
  threadInts("th_parked"),
  {
    name: "th_parked_cond",
    threadsOnly: true,
    decl: () => "let th_parked_cond = Condition.create ()",
    blocks: () => [root(2, "noscan")],
    layout: () => {},
  },
  {
    // The threads' descriptors from its second slot (the first holds an immediate), so its
    // darkening pushes (and marking scans) its fields from the second: each systhread's
    // descriptor [id; closure; status] (st_stubs.c, caml_thread_new_descriptor), its closure
    // field cleared by caml_thread_start, its status a custom block. While a systhread lives,
    // its descriptor and its condition are marked from the roots (lib/runtime/_mark.ts:
    // `threads`); once it ended, by scanning these arrays.
    name: "th_handle",
    threadsOnly: true,
    decl: (p) => `let th_handle = Array.make ${threadsOf(p)} (Obj.repr 0)`,
    blocks: (
      p,
    ) => [{ wosize: threadsOf(p), fields: "pointers", via: "root", mark: initThreadsOf(p) }],
    layout: (p, lay) => {
      // The threads made at initialisation; the slots of those a spawned domain makes during
      // the run hold an immediate until then (the simulation holds their descriptors).
      const n = threadsOf(p), init = initThreadsOf(p);
      for (let k = 1; k <= init; k++) {
        const status = lay.blocks.push("2 255 0") - 1;
        const descriptor = lay.blocks.push(`3 0 0 | i i b${status}`) - 1;
        lay.threads.push({ descriptor, cond: lay.conds[k] });
      }
      const rest = " i".repeat(n - 1 - init);
      lay.globals.push(
        `${n} 0 0 | i${lay.threads.map((t) => ` b${t.descriptor}`).join("")}${rest}`,
      );
    },
  },
  {
    // Each thread's loop context (see `loops`): the main thread's, then the domains' count on.
    name: "th_ctx",
    threadsOnly: true,
    decl: (p) => {
      const ctx = [
        0,
        ...Array.from({ length: p.threads ?? 0 }, (_, k) => p.domains + k),
        ...(p.batonOrds ?? []),
      ];
      return `let th_ctx = [| ${ctx.join("; ")} |]`;
    },
    blocks: (p) => [root(threadsOf(p), "ints")],
    layout: (p, lay) => void lay.globals.push(ints(threadsOf(p))),
  },
  intArray("th_of_id", () => "256", () => 256, "0", { threadsOnly: true }),
  {
    // The mutex of each thread's baton (only with spawned domains' threads, see
    // `batonOrds`): the harness's `baton` for the main domain's threads, a mutex of its own for
    // each spawned domain's, which no other domain takes. The array is made first, then each
    // domain's mutex, stored in it for each of the domain's threads.
    name: "th_lock",
    threadsOnly: true,
    decl: (p) => {
      const groups = lockGroups(p);
      if (groups.length === 0) return "";
      const sets = groups.map((g) =>
        `let () =\n  let m = Mutex.create () in\n  ${
          g.map((k) => `th_lock.(${k}) <- m`).join(";\n  ")
        }`
      );
      return [`let th_lock = Array.make ${threadsOf(p)} baton`, ...sets].join("\n");
    },
    blocks: (p) => {
      const groups = lockGroups(p);
      if (groups.length === 0) return [];
      return [
        root(threadsOf(p), "pointers"),
        ...groups.map((): HarnessBlock => ({ wosize: 2, fields: "noscan", via: "scan" })),
      ];
    },
    layout: (p, lay) => {
      const groups = lockGroups(p);
      if (groups.length === 0) return;
      // The baton's mutex, a global of its own, is marked already: its fields count as scanned.
      const fields = new Array<string>(threadsOf(p)).fill("i");
      for (const g of groups) {
        const b = lay.blocks.push("2 255 0") - 1;
        for (const k of g) fields[k] = `b${b}`;
      }
      lay.globals.push(`${fields.length} 0 0 | ${fields.join(" ")}`);
    },
  },
  {
    // Each domain's condition (counted waits), made as th_cond's: the first, the array, the
    // others; a domain waiting on its condition holds it on its stack as well.
    name: "dom_cond",
    countedOnly: true,
    decl: (p) => `let dom_cond = ${conditionArray(p.domains)}`,
    blocks: (p) => conditionArrayBlocks(p.domains),
    layout: (p, lay) => {
      const conds = Array.from({ length: p.domains }, () => lay.blocks.push("2 255 0") - 1);
      lay.globals.push(`${p.domains} 0 0 | ${conds.map((b) => `b${b}`).join(" ")}`);
    },
  },
];

/** Whether table `t` is part of a program linked (`threadsLibrary`) or not with the threads
 * library, with several domains or not (`countedWaits`). */
export function tableIncluded(
  t: HarnessTable,
  opts: { readonly threadsLibrary?: boolean; readonly countedWaits?: boolean },
): boolean {
  if (t.countedOnly) return opts.countedWaits === true;
  return !t.threadsOnly || opts.threadsLibrary === true;
}

/** The table named `name` (see {@linkcode HARNESS_TABLES}). */
export const HARNESS_TABLE: Readonly<Record<string, HarnessTable>> = Object.fromEntries(
  HARNESS_TABLES.map((t) => [t.name, t]),
);

/** The prelude's declaration of table `name` for shape `p`. */
export function declOf(name: string, p: HarnessShape): string {
  const t = HARNESS_TABLE[name];
  if (t === undefined) throw new Error(`internal error: no harness table ${name}`);
  return t.decl(p);
}
