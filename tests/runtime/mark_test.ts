// OCaml 5.3's mark loop as lib/runtime/_mark.ts runs it: the prefetch buffer's drain past the
// budget, the write barrier, mark_stack_push_block's first eight fields.
import assert from "node:assert/strict";
import { Marker, type ProgramMarkLayout } from "../../lib/runtime/_mark.ts";
import { Colour, MajorBlock } from "../../lib/runtime/_major_heap.ts";

const NONE = { locals: 0, ranges: [], blocks: [] };
const NO_PROFILES = { started: 0, roots: [] };

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
