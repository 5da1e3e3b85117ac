/**
 * Trace codec throughput against native memtrace measured in the same run (bench/_native.ts:
 * the anchor's `mt_decode_bench` and `mt_copy_bench`, unpacked from
 * `../shared/anchors/memtrace-native/bin.tar.xz`), on two trace files:
 *
 * - `ocamlopt.ctf` (tests/fixtures/memtrace; 3,499 events, deep backtraces: 116 frames on
 *   average);
 * - a large synthetic single-domain trace of 527,602 events at rate 0.01 (`_codec_trace.ts`),
 *   written to a temporary file (needs `--allow-write`).
 *
 * When the module loads, each group prints our figure next to native memtrace's with the ratio
 * (above 1.00 is faster; goal ≥ 1.20 for decode through {@linkcode Reader.iterViews} and for
 * copy). Like for like: native's timed rep is `Reader.open_` + `iter ~parse_backtraces:true` +
 * `close` (decode) or that plus re-encoding every event with `Writer.Multiplexed_domains` into
 * /dev/null (copy), so ours is {@linkcode Reader.open} on the same file + `iterViews` (or
 * `iter`, an object per event) + `close`, and `copyTrace` from that reader into a
 * {@linkcode FileSink} on /dev/null. A group runs 3 rounds, each a native process (9 timed reps
 * of the large trace or 40 of ocamlopt.ctf, after one untimed warm-up) then as many timed passes
 * of each of our variants (after half a second of warm-up before the first round); each figure
 * is the median of all its reps. The event counts must agree, else the line says `DIFFERENT`.
 * Without the anchor, the lines say it is missing and give no ratio. The large trace is also
 * decoded from memory (bytes in place, no file): the `streaming` line compares our two figures.
 * `Deno.bench`'s table follows.
 *
 * The native figures that bench/README.md used to quote (measured once, elsewhere, under
 * another load) are gone: a ratio against a figure from another time says nothing on a shared
 * machine.
 * @module
 */
import {
  copyTrace,
  type Event,
  type EventView,
  FileSink,
  MemorySink,
  MultiplexedWriter,
  Reader,
  type Timestamp,
} from "../lib/memtrace/mod.ts";
import { medianSeconds, printSideBySide } from "./_side_by_side.ts";
import { median, nativeCodecBench } from "./_native.ts";
import { largeTrace } from "./_codec_trace.ts";
import ocamlopt from "../tests/fixtures/memtrace/ocamlopt.ctf" with { type: "bytes" };
import single from "../tests/fixtures/memtrace/single_1e-4.ctf" with { type: "bytes" };

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

/** A temporary file holding the large trace (needs `--allow-write`): native memtrace and our
 * file readers read it. */
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
const OCAMLOPT_PATH = new URL("../tests/fixtures/memtrace/ocamlopt.ctf", import.meta.url).pathname;

/** Decodes the trace file at `path`, read through the reader's window (`Reader.open`'s default,
 * 256 KiB for a regular file): what native memtrace's decode bench times (`Reader.open_`,
 * `iter`, `close`). */
function decodeFile(path: string): void {
  const r = Reader.open(path);
  r.iterViews(onView);
  r.close();
}

/** The same, an object per event ({@linkcode Reader.iter}). */
function decodeFileObjects(path: string): void {
  const r = Reader.open(path);
  r.iter(onEvent);
  r.close();
}

/** Copies the trace file at `path` into /dev/null: what native memtrace's copy bench times. */
function copyFile(path: string): void {
  const r = Reader.open(path);
  const out = Deno.openSync("/dev/null", { write: true });
  try {
    copyTrace(r, new FileSink(out));
  } finally {
    out.close();
    r.close();
  }
}

// Side by side with native memtrace, measured in this run on the same trace files
// (bench/_native.ts): a group's rounds alternate a native process (its bench's `reps` timed
// reps after one warm-up) with the same number of passes of each of our variants, so that both
// see the same load; each figure is the median of all its reps.
const GOAL = "goal ≥ 1.20";
const NATIVE = "native memtrace (same run)";
const ROUNDS = 3;

interface Variant {
  label: string;
  pass: () => void;
  note?: string;
}

function sideBySide(
  group: "decode" | "copy",
  traceLabel: string,
  path: string,
  events: number,
  reps: number,
  variants: Variant[],
): Map<string, number> {
  // Our warm-up: half a second of every variant (V8 re-optimises the hot paths for a while).
  for (const v of variants) medianSeconds(v.pass, { rounds: 1, warmup: 5, warmupSeconds: 0.5 });
  const native: number[] = [];
  let why: string | undefined;
  const ours = variants.map(() => [] as number[]);
  for (let round = 0; round < ROUNDS; round++) {
    const n = why === undefined ? nativeCodecBench(group, path, reps) : why;
    if (typeof n === "string") why = n;
    else if (n.events !== events) {
      why = `counted ${n.events} events where we count ${events}: DIFFERENT`;
    } else native.push(...n.times);
    variants.forEach((v, i) => {
      for (let k = 0; k < reps; k++) {
        const t0 = performance.now();
        v.pass();
        ours[i].push((performance.now() - t0) / 1000);
      }
    });
  }
  const anchor = why ?? events / median(native) / 1e6;
  const figures = new Map<string, number>();
  variants.forEach((v, i) => {
    const value = events / median(ours[i]) / 1e6;
    figures.set(v.label, value);
    printSideBySide({
      group,
      label: `${traceLabel}${v.label === "" ? "" : ", " + v.label}`,
      ours: { value, unit: "M events/s" },
      anchor,
      anchorName: NATIVE,
      note: v.note,
    });
  });
  return figures;
}

const ITER_NOTE = "no goal of its own; like memtrace's reader, a new value per event";
const largeLabel = `large synthetic trace, ${LARGE_COUNT} events`;
const oLabel = `ocamlopt.ctf, ${EVENTS} events`;
if ("path" in largeOnDisk) {
  const largePath = largeOnDisk.path;
  const fig = sideBySide("decode", largeLabel, largePath, LARGE_COUNT, 9, [
    { label: "", pass: () => decodeFile(largePath), note: GOAL },
    {
      label: "iter: an object per event",
      pass: () => decodeFileObjects(largePath),
      note: ITER_NOTE,
    },
    {
      label: "bytes already in memory",
      pass: () => decodeViews(large),
      note: "no goal; native reads the file",
    },
  ]);
  printSideBySide({
    group: "streaming",
    label: `${largeLabel}, read from a file through the reader's window`,
    ours: { value: fig.get("")!, unit: "M events/s" },
    anchor: fig.get("bytes already in memory")!,
    anchorName: "ours in memory",
    note: "goal ≥ 0.90",
  });
} else {
  printSideBySide({
    group: "decode",
    label: largeLabel,
    ours: {
      value: LARGE_COUNT / medianSeconds(() => decodeViews(large)) / 1e6,
      unit: "M events/s",
    },
    anchor: largeOnDisk.why,
    anchorName: NATIVE,
  });
}
sideBySide("decode", oLabel, OCAMLOPT_PATH, EVENTS, 40, [
  { label: "", pass: () => decodeFile(OCAMLOPT_PATH), note: GOAL },
  {
    label: "iter: an object per event",
    pass: () => decodeFileObjects(OCAMLOPT_PATH),
    note: ITER_NOTE,
  },
]);
if ("path" in largeOnDisk) {
  const largePath = largeOnDisk.path;
  sideBySide("copy", largeLabel, largePath, LARGE_COUNT, 9, [
    { label: "", pass: () => copyFile(largePath), note: GOAL },
  ]);
}
sideBySide("copy", oLabel, OCAMLOPT_PATH, EVENTS, 40, [
  { label: "", pass: () => copyFile(OCAMLOPT_PATH), note: GOAL },
]);

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
