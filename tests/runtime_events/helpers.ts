/** Shared helpers for the runtime_events tests: event collection, a seeded PRNG and an empty
 * sparse ring file. */
import {
  type ConsumerCallbacks,
  type CursorOptions,
  type Layout,
  RuntimeEventsCursor,
} from "../../lib/runtime_events/mod.ts";
import { computeLayout } from "../../lib/runtime_events/layout.ts";

/** An event as delivered by the cursor, flattened for comparisons. */
export type Ev =
  | { k: "begin" | "end"; d: number; ts: bigint; phase: number }
  | { k: "counter"; d: number; ts: bigint; counter: number; value: bigint }
  | { k: "alloc"; d: number; ts: bigint; buckets: bigint[] }
  | { k: "lifecycle"; d: number; ts: bigint; ev: number; data: bigint | null }
  | { k: "lost"; d: number; words: number }
  | { k: "unit"; d: number; ts: bigint; name: string }
  | { k: "int"; d: number; ts: bigint; name: string; value: bigint }
  | { k: "span"; d: number; ts: bigint; name: string; span: "begin" | "end" }
  | { k: "custom"; d: number; ts: bigint; name: string; payload: number[]; decoded: unknown };

/** Callbacks pushing every event onto `out`. */
export function collector(out: Ev[]): ConsumerCallbacks {
  return {
    runtimeBegin: (d, ts, phase) => out.push({ k: "begin", d, ts, phase }),
    runtimeEnd: (d, ts, phase) => out.push({ k: "end", d, ts, phase }),
    runtimeCounter: (d, ts, counter, value) => out.push({ k: "counter", d, ts, counter, value }),
    alloc: (d, ts, buckets) => out.push({ k: "alloc", d, ts, buckets }),
    lifecycle: (d, ts, ev, data) => out.push({ k: "lifecycle", d, ts, ev, data }),
    lostEvents: (d, words) => out.push({ k: "lost", d, words }),
    userUnit: (d, ts, e) => out.push({ k: "unit", d, ts, name: e.name }),
    userInt: (d, ts, e, value) => out.push({ k: "int", d, ts, name: e.name, value }),
    userSpan: (d, ts, e, span) => out.push({ k: "span", d, ts, name: e.name, span }),
    userCustom: (d, ts, e, payload, decoded) =>
      out.push({ k: "custom", d, ts, name: e.name, payload: [...payload], decoded }),
  };
}

/** Reads every event of an image with a fresh cursor. */
export function readEvents(image: Uint8Array, options: CursorOptions = {}): Ev[] {
  const out: Ev[] = [];
  new RuntimeEventsCursor(image, options).readAll(collector(out));
  return out;
}

/** A virtual clock: 1000, 1001, 1002, … as bigints-free numbers. */
export function counterClock(start = 1000): () => number {
  let t = start;
  return () => t++;
}

/** Deterministic PRNG (mulberry32) so fuzz and wrap tests are reproducible. */
export { mulberry32 as prng } from "../prng.ts";

/** Writes at `path` a ring file of `maxDomains` rings of 2^`logWsize` words that holds no event:
 * its metadata header, the rest left a hole (4,096 rings of 2^16 words, a 2 GiB file, take
 * kilobytes on disk). Returns its layout. */
export function writeSparseRingFile(path: string, maxDomains: number, logWsize: number): Layout {
  const layout = computeLayout(maxDomains, logWsize);
  const f = Deno.openSync(path, { write: true, create: true });
  const h = new DataView(new ArrayBuffer(64));
  [
    1,
    maxDomains,
    80,
    layout.ringSizeBytes,
    layout.ringSizeElements,
    64,
    layout.dataOffset,
    layout.customEventsOffset,
  ].forEach((v, i) => h.setBigUint64(i * 8, BigInt(v), true));
  f.writeSync(new Uint8Array(h.buffer));
  f.truncateSync(layout.totalSize);
  f.close();
  return layout;
}
