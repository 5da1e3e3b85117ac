/**
 * Big synthetic memtrace traces for the tools and scale benches, written straight to a file
 * (never held in memory, never in the repository), deterministically for a given size, depth
 * and seed:
 *
 * - 8 domains taking turns in bursts of 200 to 1,200 events;
 * - 20,000 location codes over 6,000 functions in 150 modules (names of 30 to 200 characters:
 *   `Service_module_….Sub_….function_…`; every eighth code an inlined pair);
 * - 30,000 stacks, caller first, each a root-to-node path of a call tree, 11 to 119 frames deep
 *   by default (`depth`), a fifth of them ending in a recursion of up to 40 repeated frames
 *   (about 70 frames an allocation by default); a quarter of the allocations take a stack from
 *   anywhere (a skewed few dominating), the rest keep to their domain's current 16 stacks for a
 *   while, so that consecutive allocations share long prefixes, as in real programs;
 * - about half the events allocations (minor blocks of 1 to 256 words, major ones of up to
 *   50,000 words with many samples, a few external), the rest promotions and collections: each
 *   domain's young objects are collected or promoted at its minor collections, promoted ones
 *   collected later, most of them.
 *
 * About 10 to 15 bytes an event (deep stacks: 10^6 events 15 MB, 10^7 108 MB, 10^8 1,035 MB).
 * @module
 */
import {
  FileSink,
  Location,
  type LocationCode,
  MemtraceAllocationSource,
  MultiplexedWriter,
} from "../lib/memtrace/mod.ts";
import { mulberry32 } from "../tests/prng.ts";

/** Options of {@linkcode writeBigTrace}. */
export interface BigTraceOptions {
  /** Events to write (allocations, promotions, collections). */
  events: number;
  /** Seed (default 1). */
  seed?: number;
  /** Domains taking turns (default 8). */
  domains?: number;
  /** Depths of the call tree's paths the stacks follow, before any recursion (default 11 to
   * 119: deep stacks, about 70 frames on average). */
  depth?: readonly [number, number];
}

const START = 1_780_000_000_000_000;

/** Writes the trace to `path` (through a temporary file renamed into place); returns its size. */
export function writeBigTrace(path: string, o: BigTraceOptions): number {
  const rand = mulberry32(o.seed ?? 1);
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const ndomains = o.domains ?? 8;
  // Functions and their location codes.
  const NFUNCS = 6_000, NCODES = 20_000;
  const funcs: { file: string; name: string }[] = [];
  for (let f = 0; f < NFUNCS; f++) {
    const m = f % 150;
    const mod = `Service_module_${m}`;
    const depth = 1 + (f % 4);
    let name = mod;
    for (let k = 0; k < depth; k++) name += `.Sub_${(f * 7 + k) % 31}`;
    name += `.function_${f}_` + "x".repeat(int(0, 150));
    funcs.push({ file: `src/service/module_${m}.ml`, name });
  }
  const locs = new Map<LocationCode, Location[]>();
  const codeFunc = new Int32Array(NCODES);
  for (let c = 0; c < NCODES; c++) {
    const f = c < NFUNCS ? c : int(0, NFUNCS - 1);
    codeFunc[c] = f;
    const { file, name } = funcs[f];
    const here = new Location(file, 10 + (c % 3000), int(0, 40), int(41, 90), name);
    const inner = funcs[int(0, NFUNCS - 1)];
    locs.set(
      0x500000 + c * 8,
      c % 8 === 7 ? [new Location(inner.file, 5 + (c % 700), 2, 30, inner.name), here] : [here],
    );
  }
  const lookup = (c: LocationCode) => locs.get(c) ?? [];
  // A call tree over the codes: a stack is a root-to-node path (callee first when written).
  const parent = new Int32Array(NCODES);
  const depthOf = new Int32Array(NCODES);
  parent[0] = -1;
  for (let c = 1; c < NCODES; c++) {
    // Attach near the end so that paths get deep (up to ~120).
    const p = c < 4 ? 0 : Math.max(0, c - int(1, 60));
    parent[c] = p;
    depthOf[c] = depthOf[p] + 1;
  }
  const [minDepth, maxDepth] = o.depth ?? [11, 119];
  const NSTACKS = 30_000;
  const stacks: Float64Array[] = [];
  for (let s = 0; s < NSTACKS; s++) {
    let leaf = int(1, NCODES - 1);
    while (depthOf[leaf] < minDepth || depthOf[leaf] > maxDepth) leaf = int(1, NCODES - 1);
    const path: number[] = [];
    const rec = rand() < 0.2 ? int(1, Math.min(40, maxDepth)) : 0;
    for (let k = 0; k < rec; k++) path.push(0x500000 + leaf * 8);
    for (let n = leaf; n >= 0; n = parent[n]) path.push(0x500000 + n * 8);
    stacks.push(Float64Array.from(path));
  }
  const tmp = `${path}.tmp${Deno.pid}`;
  const file = Deno.openSync(tmp, { write: true, create: true, truncate: true });
  try {
    const w = MultiplexedWriter.create(new FileSink(file), {
      sampleRate: 1e-5,
      wordSize: 64,
      executableName: "synthetic/big_service",
      hostName: "memprof-lab-bench",
      ocamlRuntimeParams: "s=4M,d=8",
      pid: 31337n,
      initialDomain: 0,
      startTime: START,
      context: `synthetic ${o.events}-event trace, seed ${
        o.seed ?? 1
      }, depth ${minDepth}-${maxDepth}`,
    });
    // Per domain: young ids (collected or promoted at its minor GC) and promoted/major ids.
    const young: number[][] = Array.from({ length: ndomains }, () => []);
    const old: number[][] = Array.from({ length: ndomains }, () => []);
    const phase = new Int32Array(ndomains);
    let now = START + 1000, written = 0;
    const pickStack = (d: number) => {
      // A quarter of the allocations come from anywhere (skewed), the rest from the domain's
      // current few stacks.
      if (rand() < 0.25) return stacks[Math.floor(NSTACKS * rand() ** 2.5)];
      if (rand() < 0.03) phase[d] = Math.floor(NSTACKS * rand() ** 2.5);
      return stacks[Math.min(NSTACKS - 1, phase[d] + int(0, 15))];
    };
    while (written < o.events) {
      const d = int(0, ndomains - 1);
      const writer = w.forDomain(d);
      const burst = int(200, 1200);
      for (let k = 0; k < burst && written < o.events; k++) {
        now += int(0, 3);
        const y = young[d];
        if (y.length >= 40 && rand() < 0.05) {
          // A minor collection: most young objects die, some are promoted.
          for (let i = 0; i < y.length && written < o.events; i++) {
            if (rand() < 0.9) writer.putCollect(now, y[i]);
            else {
              writer.putPromote(now, y[i]);
              old[d].push(y[i]);
            }
            written++;
          }
          y.length = 0;
          const ol = old[d];
          if (ol.length > 2_000) {
            let kept = 0;
            for (let i = 0; i < ol.length; i++) {
              if (written < o.events && rand() < 0.8) {
                writer.putCollect(now, ol[i]);
                written++;
              } else ol[kept++] = ol[i];
            }
            ol.length = kept;
          }
          continue;
        }
        const r = rand();
        const source = r < 0.93
          ? MemtraceAllocationSource.Minor
          : r < 0.99
          ? MemtraceAllocationSource.Major
          : MemtraceAllocationSource.External;
        const length = source === MemtraceAllocationSource.Minor
          ? (rand() < 0.5 ? int(1, 16) : int(17, 256))
          : int(257, 50_000);
        const nsamples = source === MemtraceAllocationSource.Minor
          ? (rand() < 0.98 ? 1 : 2)
          : Math.max(1, Math.round(length * 1e-5 * 50 * rand()));
        const id = writer.putAlloc({
          time: now,
          length,
          nsamples,
          source,
          callstack: pickStack(d),
          decode: lookup,
        });
        written++;
        if (source === MemtraceAllocationSource.Minor) young[d].push(id);
        else old[d].push(id);
      }
    }
    w.flush();
  } finally {
    file.close();
  }
  Deno.renameSync(tmp, path);
  return Deno.statSync(path).size;
}

/** Options of {@linkcode bigTrace}. */
export interface BigTraceCacheOptions {
  /** As {@linkcode BigTraceOptions.depth}. */
  depth?: readonly [number, number];
  /** Directory of the cache (default: `$MEMPROF_LAB_BENCH_CACHE`, else `$TMPDIR` or /tmp, in
   * a `memprof-lab-bench` folder). */
  dir?: string;
}

/** The path of the `events`-event big trace, written once and kept in a cache directory (it is
 * the same on every run); its size in bytes. */
export function bigTrace(
  events: number,
  options: BigTraceCacheOptions = {},
): { path: string; bytes: number } {
  const dir = options.dir ?? Deno.env.get("MEMPROF_LAB_BENCH_CACHE") ??
    `${Deno.env.get("TMPDIR") ?? "/tmp"}/memprof-lab-bench`;
  Deno.mkdirSync(dir, { recursive: true });
  // v2: the generator's version; bump it when the trace changes.
  const depth = options.depth ?? [11, 119];
  const path = `${dir}/big-v2-${events}-d${depth[0]}-${depth[1]}.ctf`;
  try {
    return { path, bytes: Deno.statSync(path).size };
  } catch {
    return { path, bytes: writeBigTrace(path, { events, depth }) };
  }
}
