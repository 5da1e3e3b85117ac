/**
 * A synthetic memtrace trace of any length, written with the project's `MultiplexedWriter`:
 * several domains taking turns in bursts, ~1,500 stacks over 60 functions (a few skewed to
 * dominate), minor, major and external allocations, objects dying young, promoted and kept
 * for a while, or kept to the end. Deterministic for a given seed.
 * @module
 */
import {
  AllocationSource,
  Location,
  MemorySink,
  MultiplexedWriter,
} from "../../lib/memtrace/mod.ts";
import { mulberry32 } from "../prng.ts";

/** Options of {@linkcode syntheticTrace}. */
export interface SyntheticOptions {
  /** Events to write (allocations, promotions, collections); at least this many. */
  events: number;
  /** Domains taking turns (default 4). */
  domains?: number;
  /** Seed (default 1). */
  seed?: number;
  /** The trace's sample rate (default 1e-4). */
  rate?: number;
}

const START = 1_767_225_600_000_000;

/** The bytes of a synthetic trace. */
export function syntheticTrace(o: SyntheticOptions): Uint8Array {
  const rnd = mulberry32(o.seed ?? 1);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const domains = o.domains ?? 4;
  // 60 functions in 10 modules; each has 3 call sites (codes); every seventh code stands for
  // two locations (an inlined call).
  const locs = new Map<number, Location[]>();
  const fnCodes: number[][] = [];
  for (let f = 0; f < 60; f++) {
    const mod = `Mod${f % 10}`, name = `${mod}.fn${f}`, file = `mod${f % 10}.ml`;
    const codes: number[] = [];
    for (let s = 0; s < 3; s++) {
      const code = 0x400000 + f * 16 + s;
      const here = new Location(file, 10 + f * 5 + s, 2, 30, name);
      locs.set(
        code,
        code % 7 === 0 ? [here, new Location(file, 200 + f, 4, 20, `${name}.inner`)] : [here],
      );
      codes.push(code);
    }
    fnCodes.push(codes);
  }
  const mainCode = 0x300000;
  locs.set(mainCode, [new Location("main.ml", 1, 0, 20, "Main.main")]);
  const lookup = (c: number) => locs.get(c) ?? [];
  // Stacks, callee first (as writers take them), all rooted in Main.main.
  const stacks: number[][] = [];
  for (let i = 0; i < 1500; i++) {
    const depth = int(2, 13);
    const callerFirst = [mainCode];
    for (let d = 0; d < depth; d++) callerFirst.push(fnCodes[int(0, 59)][int(0, 2)]);
    stacks.push(callerFirst.reverse());
  }

  const sink = new MemorySink();
  const w = MultiplexedWriter.create(sink, {
    sampleRate: o.rate ?? 1e-4,
    wordSize: 64,
    executableName: "synthetic",
    hostName: "memprof-lab",
    ocamlRuntimeParams: "",
    pid: 4242n,
    initialDomain: 0,
    startTime: START,
    context: `synthetic trace, ${o.events} events`,
  });
  // Per domain: pending promotions and collections, [time, kind (0 promote, 1 collect), id].
  const pending: [number, number, number][][] = Array.from({ length: domains }, () => []);
  let now = START, written = 0;
  while (written < o.events) {
    for (let d = 0; d < domains && written < o.events; d++) {
      const writer = w.forDomain(d);
      const queue = pending[d];
      queue.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
      let q = 0;
      for (let burst = 0; burst < 300 && written < o.events; burst++) {
        now += int(1, 4);
        while (q < queue.length && queue[q][0] <= now) {
          const [, kind, id] = queue[q++];
          if (kind === 0) writer.putPromote(now, id);
          else writer.putCollect(now, id);
          written++;
        }
        const r = rnd();
        const source = r < 0.85
          ? AllocationSource.Minor
          : r < 0.95
          ? AllocationSource.Major
          : AllocationSource.External;
        const length = source === AllocationSource.Minor
          ? int(1, 16)
          : source === AllocationSource.Major
          ? int(257, 4000)
          : int(10, 1000);
        const nsamples = source === AllocationSource.Minor ? (rnd() < 0.95 ? 1 : 2) : int(1, 5);
        const stack = stacks[Math.floor(stacks.length * rnd() ** 3)];
        const id = writer.putAlloc({
          time: now,
          length,
          nsamples,
          source,
          callstack: stack,
          decode: lookup,
        });
        written++;
        const life = rnd();
        if (life < 0.6) queue.push([now + int(1, 200), 1, id]);
        else if (life < 0.9) {
          if (source === AllocationSource.Minor) queue.push([now + int(20, 60), 0, id]);
          queue.push([now + int(1_000, 100_000), 1, id]);
        } else if (source === AllocationSource.Minor) queue.push([now + int(20, 60), 0, id]);
      }
      pending[d] = queue.slice(q);
    }
  }
  w.flush();
  return sink.bytes().slice();
}
