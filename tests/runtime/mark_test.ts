// OCaml 5.3's mark loop as lib/runtime/_mark.ts runs it: the prefetch buffer's drain past the
// budget, the write barrier, mark_stack_push_block's first eight fields.
import assert from "node:assert/strict";
import { Marker, type ProgramMarkLayout } from "../../lib/runtime/_mark.ts";
import { Colour, MajorBlock } from "../../lib/runtime/_major_heap.ts";
import { harnessMarkLayout } from "../../lib/export/_harness_heap.ts";

const NONE = { locals: 0, stackRanges: 0, ranges: [], blocks: [] };
const NO_PROFILES = { roots: [] };

/** A marker over `layout` whose keep site 0 holds `strings` strings of 1,000 words. */
function siteOfStrings(strings: number, layout: Partial<ProgramMarkLayout> = {}) {
  const blocks = new Map<number, MajorBlock>();
  for (let k = 0; k < strings; k++) {
    blocks.set(100 * (k + 1), new MajorBlock(100 * (k + 1), 1001, Colour.UNMARKED, null, true));
  }
  const marker = new Marker(
    { fixed: NONE, globals: ["1 0 0 | k0"], blocks: [], sites: [strings], ...layout },
    {
      siteSlot: (_site, slot) => slot < strings ? 100 * (slot + 1) : -1,
      block: (addr) => blocks.get(addr),
      link: () => -1,
    },
  );
  marker.startCycle(1, [], NO_PROFILES, false);
  return { marker, blocks };
}

Deno.test("a spent budget drains the prefetch buffer: every string of the site is marked", () => {
  const { marker } = siteOfStrings(4);
  // ks's field (1), the site's header (1), its 4 slots (4): 4 words of budget are left when
  // the strings are queued; each then costs its header and its 1,000 words.
  assert.equal(marker.mark(10), 4 - 4 * 1001);
  assert.equal(marker.done, false);
  // The next call finds the mark stack empty: marking is done, nothing spent.
  assert.equal(marker.mark(5), 5);
  assert.equal(marker.done, true);
});

Deno.test("a string the site loses before marking scans it is darkened: nothing charged", () => {
  const { marker } = siteOfStrings(4);
  marker.darken(100);
  assert.equal(marker.mark(10), 4 - 3 * 1001);
});

Deno.test("a budget spent inside a site's slots leaves the rest on the mark stack", () => {
  const { marker } = siteOfStrings(4);
  // ks's field and the site's header, then one slot: its string is queued and then drained.
  assert.equal(marker.mark(3), 0 - 1001);
  // The three other slots, then their strings.
  assert.equal(marker.mark(5), 2 - 3 * 1001);
  assert.equal(marker.mark(1), 1);
  assert.equal(marker.done, true);
});

Deno.test("darkened globals push their fields from the first pointer among the first eight", () => {
  const cost = (globals: string[], blocks: string[] = []) => {
    const m = new Marker({ fixed: NONE, globals, blocks, sites: [] }, {
      siteSlot: () => -1,
      block: () => undefined,
      link: () => -1,
    });
    m.startCycle(1, [], NO_PROFILES, false);
    return 1_000_000 - m.mark(1_000_000);
  };
  assert.equal(cost(["8 0 0 | i*8"]), 0); // nothing to push
  assert.equal(cost(["20 0 0 | i*20"]), 12); // from the ninth field
  assert.equal(cost(["4 0 0 | i i s i"]), 2); // from the static pointer
  // A block reached by scanning costs its header and all its fields; a string its size too.
  assert.equal(cost(["2 0 0 | b0 b1"], ["3 0 0 | i*3", "5 252 0"]), 2 + 4 + 6);
});

/** The words one cycle marks when the write barrier darkens all `n` blocks of a keep site (20
 * words each, immediates: each pushes its fields from the ninth) before marking starts, with
 * a major heap of `heapWords`. */
function barrierCycle(n: number, heapWords: number): number {
  const blocks = new Map<number, MajorBlock>();
  for (let k = 0; k < n; k++) {
    blocks.set(100 * (k + 1), new MajorBlock(100 * (k + 1), 21, Colour.UNMARKED, null, false));
  }
  const marker = new Marker(
    { fixed: NONE, globals: ["1 0 0 | k0"], blocks: [], sites: [n] },
    {
      siteSlot: (_site, slot) => slot < n ? 100 * (slot + 1) : -1,
      block: (addr) => blocks.get(addr),
      link: () => -1,
      heapWords: () => heapWords,
    },
  );
  marker.startCycle(1, [], NO_PROFILES, false);
  for (let k = 0; k < n; k++) marker.darken(100 * (k + 1));
  const left = marker.mark(1_000_000_000);
  assert.equal(marker.done, true);
  return 1_000_000_000 - left;
}

Deno.test("a full mark stack grows while under a 32nd of the heap: every pushed field is scanned", () => {
  // 4,096 entries are 64 KiB: 2 MiB and 4 words of heap let the stack double to 8,192.
  const unbounded = barrierCycle(5_000, 1e12);
  assert.equal(barrierCycle(5_000, 262_148), unbounded);
  // ks's field, the site's header, its slots (each once, and once more at each of the
  // prefetch buffer's fills), the blocks' 12 fields each.
  assert.ok(unbounded >= 2 + 5_000 + 5_000 * 12 && unbounded < 2 + 5_100 + 5_000 * 12);
  assert.equal(barrierCycle(8_000, 262_148), barrierCycle(8_000, 1e12));
});

Deno.test("a full mark stack is compressed past a 32nd of the heap: immediates cost nothing there", () => {
  // With 2 MiB of heap the stack cannot grow: the 4,097th push compresses the 4,096 entries
  // there (ks's field and 4,095 blocks' fields). The blocks pushed after are scanned; then the
  // compressed fields are darkened: ks's field darkens the site, charging no header and
  // pushing its slots, scanned as before; the blocks' fields are immediates, charged nothing.
  // So 4,095 blocks' 12 fields, ks's field and the site's header are not charged.
  assert.equal(barrierCycle(5_000, 262_144), barrierCycle(5_000, 1e12) - 4_095 * 12 - 2);
  // Grown to 8,192 entries, then compressed at the 8,193rd push.
  assert.equal(barrierCycle(9_000, 262_148), barrierCycle(9_000, 1e12) - 8_191 * 12 - 2);
  // Compressed twice: at 4,096 and at the next 4,096 (the compressed entries not yet darkened
  // are kept).
  assert.equal(barrierCycle(9_000, 262_144), barrierCycle(9_000, 1e12) - 8_191 * 12 - 2);
});

// The program's own part as lib/export/_harness_heap.ts lays it out: what a cycle marks with
// systhreads, user events and profiles (measured on OCaml 5.3 with OCAMLRUNPARAM=v=0x800, the
// regressions custom_cycles_thread, custom_cycles_thread_end, events_harness_marking).
const PARAMS = { domains: 1, maxDepth: 1, profiles: 1, sites: [10], exceptions: 0, fifoSites: [] };

/** The words a whole cycle marks for `layout`, with systhreads alive as `alive` says and the
 * program's profile slot 0 holding profile `slot0` (-1: none), memprof's roots `roots`. */
function cycleWork(
  layout: ProgramMarkLayout,
  alive: (k: number) => boolean = () => true,
  slot0 = -1,
  roots: number[] = [],
): number {
  const m = new Marker(layout, {
    siteSlot: () => -1,
    block: () => undefined,
    link: () => -1,
    threadAlive: alive,
    profileSlot: (j) => j === 0 ? slot0 : -1,
  });
  m.startCycle(1, [], { roots }, true);
  return 1_000_000 - m.mark(1_000_000);
}

Deno.test("a waiting systhread marks 6 words a cycle, 12 once it ended", () => {
  const layout = (threads: number) =>
    harnessMarkLayout({ ...PARAMS, threads }, [], { threadsLibrary: true });
  const none = cycleWork(layout(0));
  assert.equal(cycleWork(layout(1)) - none, 6);
  assert.equal(cycleWork(layout(3)) - none, 18);
  assert.equal(cycleWork(layout(1), () => false) - none, 12);
  assert.equal(cycleWork(layout(3), (k) => k !== 2) - none, 24);
});

Deno.test("the runtime's list of user events: 2 words for its first cell, 3 for each other", () => {
  const layout = (userEvents: number) =>
    harnessMarkLayout(PARAMS, [], { events: true, userEvents });
  const none = cycleWork(layout(0));
  // Each event: its tag constructor (2), its record (3) and the record's `Some tag` (2).
  assert.equal(cycleWork(layout(1)) - none, 7 + 2);
  assert.equal(cycleWork(layout(3)) - none, 3 * 7 + 2 + 2 * 3);
});

Deno.test("a profile's config block: 8 words and its float from memprof's roots, 10 and 2 from its slot", () => {
  const layout = harnessMarkLayout(PARAMS);
  const none = cycleWork(layout);
  // memprof's roots darken it (8 fields pushed), the slot finds it marked (1 field scanned).
  assert.equal(cycleWork(layout, undefined, 0, [0]) - none, 1 + 8 + 2);
  // Only the slot: the prof array's field, the config's header and 9 fields, the float.
  assert.equal(cycleWork(layout, undefined, 0) - none, 1 + 10 + 2);
  // memprof's roots only (another profile took the slot since): 8 and the float.
  assert.equal(cycleWork(layout, undefined, -1, [0]) - none, 8 + 2);
});

Deno.test("a value built at initialisation to be marshalled is not a global of the program", () => {
  const dead = { wosize: 300, fields: "ints" as const, via: "dead" as const };
  assert.deepEqual(harnessMarkLayout(PARAMS, [dead]).globals, harnessMarkLayout(PARAMS).globals);
});
