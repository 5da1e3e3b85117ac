/**
 * Trace codec throughput against native memtrace (the anchors of bench/README.md), on two traces:
 *
 * - `ocamlopt.ctf` (tests/fixtures/memtrace; 3,499 events, deep backtraces: 116 frames on average);
 * - a large synthetic single-domain trace of 527,602 events at rate 0.01, the size of the trace
 *   the native figures were measured on (the repository does not hold that trace). It is built at
 *   load time, deterministically, by writing a seeded synthetic event stream through our
 *   {@linkcode Writer} (not through the engine, so that the bench does not depend on it),
 *   modelled on `single_1e-4.ctf` (see its dump, single_1e-4.txt): 300 location codes in 12 files
 *   (10 % with an inlined second location, one with none, as the fixture's root frame), of which
 *   about 200 get used; allocations from 200 sites whose backtraces are root-to-site paths of a
 *   call tree, some ending in recursion (6.6 frames on average, at most 16; the fixture: 6.0 and
 *   18), visited in phases so that consecutive backtraces share prefixes (2 new frames per
 *   allocation; the fixture: 2.4); sizes from the fixture's mix, so that 78 % are short minor
 *   allocations (the fixture: 74 %), a few large major ones with many samples; minor collections
 *   every 20 to 80 allocations collect 95 % of the young objects and promote the rest (2.4 % of
 *   the events are promotions, as in the fixture), and major cycles collect most promoted ones.
 *
 * When the module loads, each group (decode, streaming, copy) prints our figure next to native
 * memtrace's (the midpoint of its range in bench/README.md) with the ratio: medians of 5 passes
 * after at least 5 warm-up passes and half a second of them (`medianSeconds`; with only 5 passes
 * of ocamlopt.ctf, V8 was still re-optimising the backtrace path and the figure swung between 6.5
 * and 7.5 M events/s), a pass handling the large trace once or ocamlopt.ctf 40 times. Decoding goes through {@linkcode Reader.iterViews} (every event fully decoded,
 * backtraces included, delivered through one reused view, as the copy reads); the last two decode
 * lines give the figures through {@linkcode Reader.iter}, which makes an object per event.
 * Streaming decode reads the large trace from a temporary file (with `--allow-write`) through the
 * reader's 32 KiB window ({@linkcode Reader.open}); in-memory decode reads the bytes in place.
 * `Deno.bench`'s table follows.
 * @module
 */
import {
  copyTrace,
  type Event,
  type EventView,
  Location,
  type LocationCode,
  MemorySink,
  MemtraceAllocationSource,
  MultiplexedWriter,
  Reader,
  type Timestamp,
  Writer,
} from "../lib/memtrace/mod.ts";
import { medianSeconds, printSideBySide } from "./_side_by_side.ts";
import ocamlopt from "../tests/fixtures/memtrace/ocamlopt.ctf" with { type: "bytes" };
import single from "../tests/fixtures/memtrace/single_1e-4.ctf" with { type: "bytes" };

/** Events of the large trace: the size of the trace native memtrace was measured on. */
const LARGE_EVENTS = 527_602;

/** A small seeded generator (mulberry32): the synthetic trace is the same on every run. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Builds the large synthetic trace (see the module doc). */
function largeTrace(): Uint8Array {
  const rand = rng(0x5eed14);
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
  while (events < LARGE_EVENTS) {
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
      if (events >= LARGE_EVENTS) break;
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
        if (events >= LARGE_EVENTS || rand() < 0.1) keep.push(id);
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

const large = largeTrace();

// What the decode benches do with each event: fold its id in (keeps the loop observable).
let sink = 0;
const onEvent = (_dt: number, ev: Event) => {
  sink ^= ev.objId;
};
const onView = (ev: Readonly<EventView>) => {
  sink ^= ev.objId;
};

/** Decodes `bytes`, an object per event ({@linkcode Reader.iter}); returns the event count. */
function decode(bytes: Uint8Array): number {
  let n = 0;
  Reader.fromBytes(bytes).iter((dt, ev) => {
    n++;
    onEvent(dt, ev);
  });
  return n;
}

/** Decodes `bytes` through one reused view ({@linkcode Reader.iterViews}). */
function decodeViews(bytes: Uint8Array): void {
  Reader.fromBytes(bytes).iterViews(onView);
}

function copy(bytes: Uint8Array): void {
  copyTrace(Reader.fromBytes(bytes), new MemorySink());
}

const EVENTS = decode(ocamlopt);
const SINGLE_EVENTS = decode(single);
const LARGE_COUNT = decode(large);

/** A temporary file holding the large trace, for streaming decode (needs `--allow-write`). */
function largeFile(): { path: string } | { why: string } {
  try {
    const path = Deno.makeTempFileSync({ prefix: "memtrace_bench_", suffix: ".ctf" });
    Deno.writeFileSync(path, large);
    globalThis.addEventListener("unload", () => Deno.removeSync(path));
    return { path };
  } catch (e) {
    return { why: `no temporary file (${(e as Error).name}): run with --allow-write` };
  }
}
const largeOnDisk = largeFile();

/** Decodes the trace file at `path`, read through the reader's 32 KiB window. */
function decodeFile(path: string): void {
  const r = Reader.open(path);
  r.iterViews(onView);
  r.close();
}

// Side by side with native memtrace (bench/README.md: the midpoints of the measured ranges),
// measured after warm-up as the native figures were: a pass decodes or copies the large trace
// once, ocamlopt.ctf REPEAT times (one decode of it takes well under a millisecond). Decoding
// goes through iterViews (every field of every event decoded, backtraces included, delivered
// through one reused view), as the copy does; the figures through iter (an object per event,
// which the callback may keep) follow.
const NATIVE = "native memtrace (bench/README.md)";
const REPEAT = 40;
const GOAL = "goal ≥ 1.20";
const throughput = (pass: () => void, events: number) =>
  events / medianSeconds(pass, { rounds: 5, warmup: 5, warmupSeconds: 0.5 }) / 1e6;
const side = (group: string, label: string, value: number, anchor: number, note: string) =>
  printSideBySide({
    group,
    label,
    ours: { value, unit: "M events/s" },
    anchor,
    anchorName: NATIVE,
    note,
  });
const repeat = (f: () => void) => () => {
  for (let k = 0; k < REPEAT; k++) f();
};
const largeLabel = `large synthetic trace, ${LARGE_COUNT} events`;
const oLabel = `ocamlopt.ctf, ${EVENTS} events`;
const viewsLarge = throughput(() => decodeViews(large), LARGE_COUNT);
side("decode", largeLabel, viewsLarge, 34.5, GOAL);
const viewsO = throughput(repeat(() => decodeViews(ocamlopt)), REPEAT * EVENTS);
side("decode", oLabel, viewsO, 5.55, GOAL);
if ("path" in largeOnDisk) {
  const largePath = largeOnDisk.path;
  const streamed = throughput(() => decodeFile(largePath), LARGE_COUNT);
  const inMemory = throughput(() => decodeViews(large), LARGE_COUNT);
  side(
    "streaming",
    `${largeLabel}, read from a file through the 32 KiB window`,
    streamed,
    34.5,
    `in memory ${inMemory.toFixed(2)} M events/s, streamed ÷ in memory ${
      (streamed / inMemory).toFixed(2)
    }: goal ≥ 0.90`,
  );
} else {
  printSideBySide({
    group: "streaming",
    label: largeLabel,
    ours: { value: viewsLarge, unit: "M events/s (in memory)" },
    anchor: largeOnDisk.why,
    anchorName: NATIVE,
  });
}
side("copy", largeLabel, throughput(() => copy(large), LARGE_COUNT), 11.05, GOAL);
side("copy", oLabel, throughput(repeat(() => copy(ocamlopt)), REPEAT * EVENTS), 0.985, GOAL);
const iterNote = "iter: an object per event";
// The decode goal is the iterViews lines' (bench/README.md); these are the same decode plus an
// object per event, the way memtrace's own reader hands out a new value per event.
const ITER_NOTE = "no goal of its own; like memtrace's reader, a new value per event";
side(
  "decode",
  `${largeLabel}, ${iterNote}`,
  throughput(() => decode(large), LARGE_COUNT),
  34.5,
  ITER_NOTE,
);
side(
  "decode",
  `${oLabel}, ${iterNote}`,
  throughput(repeat(() => decode(ocamlopt)), REPEAT * EVENTS),
  5.55,
  ITER_NOTE,
);

Deno.bench(
  `decode large synthetic trace (iterViews) [${LARGE_COUNT} events/iter]`,
  { group: "decode", baseline: true },
  () => decodeViews(large),
);

Deno.bench(`decode ocamlopt.ctf (iterViews) [${EVENTS} events/iter]`, { group: "decode" }, () => {
  decodeViews(ocamlopt);
});

Deno.bench(
  `decode large synthetic trace (iter) [${LARGE_COUNT} events/iter]`,
  { group: "decode" },
  () => {
    decode(large);
  },
);

Deno.bench(`decode ocamlopt.ctf (iter) [${EVENTS} events/iter]`, { group: "decode" }, () => {
  decode(ocamlopt);
});

Deno.bench(
  `decode ocamlopt.ctf without backtraces [${EVENTS} events/iter]`,
  { group: "decode" },
  () => {
    Reader.fromBytes(ocamlopt).iterViews(onView, { parseBacktraces: false });
  },
);

Deno.bench(`decode single_1e-4.ctf [${SINGLE_EVENTS} events/iter]`, { group: "decode" }, () => {
  decodeViews(single);
});

Deno.bench(
  `copy (decode+encode) large synthetic trace [${LARGE_COUNT} events/iter]`,
  { group: "copy", baseline: true },
  () => copy(large),
);

Deno.bench(`copy (decode+encode) ocamlopt.ctf [${EVENTS} events/iter]`, { group: "copy" }, () => {
  copy(ocamlopt);
});

// Encode alone: the events decoded once up front, then written.
const reader = Reader.fromBytes(ocamlopt);
const decoded: { time: Timestamp; event: Event }[] = reader.readAll().map((e) => ({
  time: e.time + reader.info.startTime,
  event: e.event,
}));
const lookup = (c: number) => reader.lookupLocationCode(c);

Deno.bench(`encode ocamlopt.ctf [${EVENTS} events/iter]`, { group: "copy" }, () => {
  const w = MultiplexedWriter.create(new MemorySink(), reader.info);
  for (const { time, event } of decoded) w.putEvent(lookup, time, event);
  w.flush();
});

if ("path" in largeOnDisk) {
  const largePath = largeOnDisk.path;
  Deno.bench(
    `streaming decode large synthetic trace from a file [${LARGE_COUNT} events/iter]`,
    { group: "streaming", baseline: true },
    () => decodeFile(largePath),
  );
  Deno.bench(
    `in-memory decode large synthetic trace [${LARGE_COUNT} events/iter]`,
    { group: "streaming" },
    () => decodeViews(large),
  );
}

globalThis.addEventListener("unload", () => {
  if (sink === 0.5) console.log(sink); // keeps the loops observable
});
