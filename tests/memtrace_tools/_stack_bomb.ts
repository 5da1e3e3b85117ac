/**
 * A "stack bomb": a small valid trace whose stacks are 60 frames deep over 64 functions with
 * names of 4,000 characters (a shared prefix, a distinct end; memtrace's writer keeps a
 * location of at most 4 KiB in all, the unknown location standing for longer ones), every
 * allocation's stack
 * drawn at random, so that nearly every allocation has a stack of its own. Its text is tiny next
 * to what a tool that spells out each stack per row would build: about 150 KB a stack.
 * Deterministic for a given seed.
 * @module
 */
import { Location, MemorySink, MemtraceAllocationSource, Writer } from "../../lib/memtrace/mod.ts";
import { mulberry32 } from "../prng.ts";

/** Options of {@linkcode stackBombTrace}. */
export interface StackBombOptions {
  /** Allocations (default 1,000). */
  allocations?: number;
  /** Frames per stack (default 60). */
  frames?: number;
  /** Characters per name (default 4,000). */
  nameLength?: number;
  /** Seed (default 1). */
  seed?: number;
}

/** The function names of the trace, by code index (64 of them). */
export function stackBombNames(nameLength = 4000): string[] {
  return Array.from({ length: 64 }, (_, i) => {
    const end = `.f${i}`;
    return "Bomb." + "n".repeat(Math.max(0, nameLength - 5 - end.length)) + end;
  });
}

/** The trace's bytes and, per allocation, its stack as code indices (caller first). */
export function stackBombTrace(
  o: StackBombOptions = {},
): { bytes: Uint8Array; stacks: number[][] } {
  const rnd = mulberry32(o.seed ?? 1);
  const names = stackBombNames(o.nameLength);
  const locs = new Map<number, Location[]>();
  names.forEach((n, i) => locs.set(0x1000 + i, [new Location("bomb.ml", i + 1, 0, 10, n)]));
  const sink = new MemorySink();
  const start = 1_790_000_000_000_000;
  const w = Writer.create(sink, {
    sampleRate: 1e-4,
    wordSize: 64,
    executableName: "stack_bomb",
    hostName: "memprof-lab",
    ocamlRuntimeParams: "",
    pid: 7n,
    initialDomain: 0,
    startTime: start,
    context: undefined,
  });
  const stacks: number[][] = [];
  const frames = o.frames ?? 60;
  for (let a = 0; a < (o.allocations ?? 1000); a++) {
    const stack = Array.from({ length: frames }, () => Math.floor(rnd() * names.length));
    stacks.push(stack);
    const id = w.putAlloc({
      time: start + 10 * a,
      length: 2,
      nsamples: 1,
      source: MemtraceAllocationSource.Minor,
      // Callee first, as writers take them.
      callstack: stack.map((i) => 0x1000 + i).reverse(),
      decode: (c) => locs.get(c) ?? [],
    });
    if (a % 2 === 0) w.putCollect(start + 10 * a + 5, id);
  }
  w.close();
  return { bytes: sink.bytes().slice(), stacks };
}
