// Seeded fuzzing over the real fixtures: bit flips, truncations and splices.
// Reading a mutated file must end in a clean read or a RuntimeEventsFormatError,
// never another exception, and never hang.
import { assert } from "./assert.ts";
import d8Image from "../fixtures/runtime_events/d8/18440.events" with {
  type: "bytes",
};
import e10Image from "../fixtures/runtime_events/e10/18448.events" with {
  type: "bytes",
};
import {
  type ConsumerCallbacks,
  DecoderRegistry,
  RuntimeEventsCursor,
  RuntimeEventsFormatError,
} from "../../lib/runtime_events/mod.ts";
import { dumpCallbacks } from "../../lib/runtime_events/dump.ts";
import { readMetadataHeader } from "../../lib/runtime_events/layout.ts";
import { refCustomDecoder } from "./fixture_decoders.ts";
import { prng } from "./helpers.ts";

const decoders = new DecoderRegistry().register("ref.custom", refCustomDecoder);

interface Region {
  start: number;
  end: number;
}

/** Regions worth mutating: headers, the used part of each ring, the names in use. */
function hotRegions(image: Uint8Array): Region[] {
  const view = new DataView(image.buffer, image.byteOffset, image.byteLength);
  const md = readMetadataHeader(view);
  const regions: Region[] = [{ start: 0, end: 64 }];
  const ringBytes = Number(md.ringSizeBytes);
  for (let d = 0; d < Number(md.maxDomains); d++) {
    const hdr = 64 + 80 * d;
    const head = Number(view.getBigUint64(hdr, true));
    const tail = Number(view.getBigUint64(hdr + 8, true));
    if (tail === 0) continue;
    regions.push({ start: hdr, end: hdr + 16 });
    const ring = Number(md.dataOffset) + d * ringBytes;
    const used = Math.min(tail - head, ringBytes / 8) * 8;
    const from = (head * 8) % ringBytes;
    if (from + used <= ringBytes) regions.push({ start: ring + from, end: ring + from + used });
    else {
      regions.push({ start: ring + from, end: ring + ringBytes });
      regions.push({ start: ring, end: ring + from + used - ringBytes });
    }
  }
  const names = Number(md.customEventsOffset);
  regions.push({ start: names, end: names + 4 * 128 });
  return regions;
}

/** Reads a (possibly mutated) image; returns "ok" or "error", throws anything else. */
function readOnce(image: Uint8Array, dump: boolean): "ok" | "error" {
  try {
    const cursor = new RuntimeEventsCursor(image, { decoders });
    let lines = 0;
    const cb: ConsumerCallbacks = dump ? dumpCallbacks(() => lines++, { decoders }) : {
      runtimeBegin: () => lines++,
      userCustom: () => lines++,
      lostEvents: () => lines++,
    };
    cursor.readAll(cb);
    return "ok";
  } catch (e) {
    if (e instanceof RuntimeEventsFormatError) return "error";
    throw e;
  }
}

function fuzz(name: string, original: Uint8Array, seed: number, rounds: number) {
  const rand = prng(seed);
  const int = (n: number) => Math.floor(rand() * n);
  const image = original.slice(); // mutated in place, restored after each round
  const regions = hotRegions(original);
  const pickOffset = () => {
    if (rand() < 0.1) return int(image.length);
    const r = regions[int(regions.length)];
    return r.start + int(r.end - r.start);
  };
  const outcomes = { ok: 0, error: 0 };
  for (let round = 0; round < rounds; round++) {
    const kind = int(4);
    const dump = round % 8 === 0;
    let touched: Region | null = null;
    let input = image;
    if (kind === 0 || kind === 1) {
      // One to four bit flips (kind 1: whole random bytes).
      const n = 1 + int(4);
      let lo = image.length, hi = 0;
      for (let i = 0; i < n; i++) {
        const at = pickOffset();
        image[at] = kind === 0 ? image[at] ^ (1 << int(8)) : int(256);
        lo = Math.min(lo, at);
        hi = Math.max(hi, at + 1);
      }
      touched = { start: lo, end: hi };
    } else if (kind === 2) {
      // Truncation, often right inside a region boundary.
      const r = regions[int(regions.length)];
      const cut = rand() < 0.5 ? r.start + int(Math.max(1, r.end - r.start)) : int(image.length);
      input = image.subarray(0, cut);
    } else {
      // Splice: copy a chunk of used data over another place (8-byte aligned or not).
      const len = 1 + int(256);
      const from = pickOffset();
      const to = pickOffset();
      const end = Math.min(image.length, to + len);
      image.copyWithin(to, from, Math.min(image.length, from + (end - to)));
      touched = { start: to, end };
    }
    const outcome = readOnce(input, dump);
    outcomes[outcome]++;
    if (touched) image.set(original.subarray(touched.start, touched.end), touched.start);
  }
  // Both outcomes must occur, or the mutations are not reaching the parser.
  assert.ok(outcomes.ok > rounds / 20, `${name}: ${JSON.stringify(outcomes)}`);
  assert.ok(outcomes.error > rounds / 20, `${name}: ${JSON.stringify(outcomes)}`);
  assert.deepStrictEqual(image, original, "image restored");
}

Deno.test("fuzz: mutated e10 fixture (wrapped rings) reads cleanly or raises the typed error", () => {
  fuzz("e10", e10Image, 0xe10, 3000);
});

Deno.test("fuzz: mutated d8 fixture reads cleanly or raises the typed error", () => {
  fuzz("d8", d8Image, 0xd8, 1500);
});

Deno.test("fuzz: the unmutated fixtures read cleanly", () => {
  assert.equal(readOnce(e10Image, true), "ok");
  assert.equal(readOnce(d8Image, true), "ok");
});
