/**
 * The large synthetic single-domain trace of the codec bench (memtrace_bench.ts's module doc
 * says what it models): 527,602 events at rate 0.01, the size of the trace native memtrace was
 * first measured on, built deterministically through our `Writer`.
 * @module
 */
import {
  Location,
  type LocationCode,
  MemorySink,
  MemtraceAllocationSource,
  Writer,
} from "../lib/memtrace/mod.ts";
import { mulberry32 } from "../tests/prng.ts";

/** Events of the large trace: the size of the trace native memtrace was measured on. */
export const LARGE_TRACE_EVENTS = 527_602;

/** Builds the large synthetic trace (see the module doc). */
export function largeTrace(): Uint8Array {
  const rand = mulberry32(0x5eed14);
  const pick = (n: number) => Math.floor(rand() * n);
  // Location codes (return addresses) and their definitions.
  const NCODES = 300;
  const files = Array.from({ length: 12 }, (_, i) => `wl_mod${i}.ml`);
  const codes: number[] = [];
  const locs = new Map<LocationCode, Location[]>();
  let addr = 46959551397456;
  for (let i = 0; i < NCODES; i++) {
    addr += 4 + pick(600);
    codes.push(addr);
    const f = pick(files.length);
    const def = `Wl_mod${f}.fn${pick(25)}`;
    const here = new Location(files[f], 1 + pick(400), pick(60), 60 + pick(40), def);
    const list = i === 0
      ? []
      : rand() < 0.1
      ? [new Location(files[f], here.line + 3, 2, 30, def + ".(fun)"), here]
      : [here];
    locs.set(addr, list);
  }
  const lookup = (c: LocationCode) => locs.get(c) ?? [];
  // A call tree over the codes: a site's backtrace is its root-to-site path, callee first.
  const parent = [-1];
  for (let i = 1; i < NCODES; i++) parent.push(i < 8 ? 0 : pick(i));
  const sizes = [5, 5, 5, 5, 2, 2, 2, 1, 10, 9, 3, 19, 18, 20, 16, 17, 11, 14, 15, 8];
  interface Site {
    stack: number[];
    length: number;
  }
  const sites: Site[] = [];
  for (let s = 0; s < 200; s++) {
    const leaf = 1 + pick(NCODES - 1);
    const path: number[] = [];
    for (let n = leaf; n >= 0; n = parent[n]) path.push(codes[n]);
    const rec = rand() < 0.2 ? 1 + pick(10) : 0; // recursion: the leaf's frame repeated
    for (let k = 0; k < rec; k++) path.unshift(path[0]);
    sites.push({ stack: path, length: sizes[pick(sizes.length)] });
  }
  const sink = new MemorySink();
  const startTime = 1_795_235_119_379_476;
  const w = Writer.create(sink, {
    sampleRate: 0.01,
    wordSize: 64,
    executableName: "synthetic/wl_single",
    hostName: "bench",
    ocamlRuntimeParams: "s=262144",
    pid: 18722n,
    initialDomain: 0,
    startTime,
    context: "synthetic single-domain trace, rate 0.01",
  });
  let events = 0;
  let now = startTime + 600;
  let phase = 0;
  let site = sites[0];
  const young: number[] = [];
  const old: number[] = [];
  let untilMinor = 20 + pick(60);
  while (events < LARGE_TRACE_EVENTS) {
    if (untilMinor-- > 0) {
      // An allocation: often from the same site as the last one, else from one of the 4 sites
      // of the current phase.
      if (rand() < 0.02) phase = pick(sites.length - 4);
      if (rand() < 0.5) site = sites[phase + pick(4)];
      now += 1 + pick(40);
      let length = rand() < 0.85 ? site.length : 1 + pick(20);
      let nsamples = 1;
      let source: MemtraceAllocationSource = MemtraceAllocationSource.Minor;
      if (rand() < 0.005) {
        length = 4096 + pick(4097);
        nsamples = Math.max(1, Math.round(length * 0.01 * (0.5 + rand())));
        source = MemtraceAllocationSource.Major;
      } else if (rand() < 0.003) nsamples = 2;
      const id = w.putAlloc({
        time: now,
        length,
        nsamples,
        source,
        callstack: site.stack,
        decode: lookup,
      });
      (source === MemtraceAllocationSource.Major ? old : young).push(id);
      events++;
      continue;
    }
    // A minor collection: most young objects die, the rest are promoted.
    for (const id of young) {
      if (events >= LARGE_TRACE_EVENTS) break;
      now += pick(2);
      if (rand() < 0.95) w.putCollect(now, id);
      else {
        w.putPromote(now, id);
        old.push(id);
      }
      events++;
    }
    young.length = 0;
    // Now and then a major cycle collects most old objects.
    if (old.length > 400) {
      const keep: number[] = [];
      for (const id of old) {
        if (events >= LARGE_TRACE_EVENTS || rand() < 0.1) keep.push(id);
        else {
          w.putCollect(now, id);
          events++;
        }
      }
      old.length = 0;
      old.push(...keep);
    }
    untilMinor = 20 + pick(60);
  }
  w.close();
  return sink.bytes().slice();
}
