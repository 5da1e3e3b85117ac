// subsample on hostile traces (issue 23): allocations of up to 2^53 - 1 samples in bounded time,
// what copy refuses refused with copy's typed error, never a written trace no reader takes.
import assert from "node:assert/strict";
import {
  AllocationSource,
  copyTrace,
  type Info,
  Location,
  MemorySink,
  MemtraceFormatError,
  MemtraceLimitError,
  MultiplexedWriter,
  Reader,
  traceStats,
  Writer,
} from "../../lib/memtrace/mod.ts";
import { EXACT_DRAW_SAMPLES, subsample, TraceToolError } from "../../lib/memtrace_tools/mod.ts";
import { measureTrace, samplesTrace } from "../trace_analysis/_hostile.ts";

const INFO: Info = {
  sampleRate: 0.01,
  wordSize: 64,
  executableName: "exec",
  hostName: "host",
  ocamlRuntimeParams: "",
  pid: 42n,
  initialDomain: 0,
  startTime: 1_000_000,
  context: undefined,
};
const HERE = [new Location("a.ml", 1, 2, 3, "A.f")];

function subsampled(input: Uint8Array, factor: number): Uint8Array {
  const sink = new MemorySink();
  subsample(Reader.fromBytes(input, { name: "in.ctf" }), sink, { factor });
  return sink.bytes().slice();
}

Deno.test("subsample: an allocation of 2^53 - 1 samples takes one binomial draw", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const big = 2 ** 53 - 1;
    Deno.writeFileSync(`${dir}/in.ctf`, samplesTrace([3, big, EXACT_DRAW_SAMPLES + 1, 2 ** 31]));
    // memtrace's tool draws once per sample: this ran for ever (2^31 alone took minutes).
    const out = await measureTrace(["subsample", `${dir}/in.ctf`, `${dir}/out.ctf`, "2"], 60_000);
    assert.equal(out.code, 0, out.stderr);
    const kept = Reader.open(`${dir}/out.ctf`).readAll().map((e) =>
      e.event.kind === "alloc" ? e.event.nsamples : -1
    );
    // The first allocation is drawn as memtrace draws it; the huge ones keep about half.
    assert.ok(kept.length >= 3 && kept.length <= 4, String(kept));
    const half = kept.find((n) => n > 2 ** 50)!;
    assert.ok(Math.abs(half - big / 2) < 5 * Math.sqrt(big / 4), `kept ${half} of ${big}`);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("subsample: up to EXACT_DRAW_SAMPLES per allocation, the draws are memtrace's", () => {
  // One allocation of k samples uses k draws of Random.int 2: the next allocation's kept count
  // then depends on k. Check by the equality with k allocations of one sample.
  const k = EXACT_DRAW_SAMPLES;
  const one = subsampled(samplesTrace([k, 7]), 2);
  const many = subsampled(samplesTrace([...new Array(k).fill(1), 7]), 2);
  const counts = (b: Uint8Array) =>
    Reader.fromBytes(b).readAll().map((e) => e.event.kind === "alloc" ? e.event.nsamples : 0);
  const a = counts(one), b = counts(many);
  assert.equal(a.at(-1), b.at(-1));
  assert.equal(a.slice(0, -1).reduce((x, y) => x + y, 0), b.slice(0, -1).reduce((x, y) => x + y));
});

/** Allocation ids a fresh writer would not give: written with one id per chunk, domain 1's
 * object is id 2 (a fresh writer gives it 10000), promoted by domain 0 once domain 0 has given
 * id 3. Renumbered as a fresh writer numbers, that promotion comes before its id. */
function foreignIds(): Uint8Array {
  const sink = new MemorySink();
  const w = MultiplexedWriter.create(sink, INFO, { idsPerChunk: 1 });
  let t = 1_000_010;
  const alloc = (domain: number) => {
    const objId = w.nextAllocId(domain);
    w.putEvent(() => HERE, t++, {
      kind: "alloc",
      time: 0,
      objId,
      domain,
      length: 2,
      nsamples: 1,
      source: AllocationSource.Minor,
      backtraceBuffer: new Float64Array([1]),
      backtraceLength: 1,
      commonPrefix: 0,
    });
    return objId;
  };
  alloc(0);
  const foreign = alloc(1);
  alloc(0);
  alloc(0);
  w.putEvent(() => HERE, t++, { kind: "promote", time: 0, objId: foreign, domain: 0 });
  w.flush();
  return sink.bytes().slice();
}

Deno.test("subsample refuses what copy refuses, with copy's typed error (it wrote an unreadable trace)", () => {
  const input = foreignIds();
  // The reader takes it; copy does not.
  assert.equal(traceStats(Reader.fromBytes(input)).promotions, 1);
  const copyError = (() => {
    try {
      copyTrace(Reader.fromBytes(input, { name: "in.ctf" }), new MemorySink());
    } catch (e) {
      return e as MemtraceFormatError;
    }
    throw new Error("copy took it");
  })();
  assert.ok(copyError instanceof MemtraceFormatError);
  assert.match(copyError.check, /^Incorrect allocation ID: the event has id \d+$/);
  assert.throws(
    () => subsampled(input, 1),
    (e: unknown) =>
      e instanceof MemtraceFormatError && e.message === copyError.message &&
      e.offset === copyError.offset,
  );
});

Deno.test("subsample refuses trace info too large to re-encode with copy's typed error at offset 0", () => {
  const sink = new MemorySink();
  Writer.create(sink, { ...INFO, executableName: "A".repeat(20_000) }).close();
  const bytes = sink.bytes().slice();
  const at = bytes.indexOf(0x41);
  bytes.fill(0xe9, at, at + 20_000); // Latin-1, doubled when written back as UTF-8
  assert.throws(
    () => subsampled(bytes, 2),
    (e: unknown) =>
      e instanceof MemtraceLimitError && e.offset === 0 && e.file === "in.ctf" &&
      e.check === "the trace info does not fit in a 32768-byte v3 packet",
  );
});

Deno.test("subsample stops with a typed error where renumbering would make a promotion unreadable", () => {
  // Ids a fresh writer gives (copy takes it): domain 1 allocates 10000, domain 0 allocates 10,001
  // objects (0..9999, then 20000 from its second chunk) and promotes 10000. Subsampled by 2,
  // domain 0 keeps about 5,000 and never reaches 10000.
  const sink = new MemorySink();
  const w = MultiplexedWriter.create(sink, INFO);
  let t = 1_000_010;
  const alloc = (domain: number, nsamples: number) => {
    const objId = w.nextAllocId(domain);
    w.putEvent(() => HERE, t++, {
      kind: "alloc",
      time: 0,
      objId,
      domain,
      length: 2,
      nsamples,
      source: AllocationSource.Minor,
      backtraceBuffer: new Float64Array([1]),
      backtraceLength: 1,
      commonPrefix: 0,
    });
    return objId;
  };
  const foreign = alloc(1, 64);
  for (let i = 0; i < 10_001; i++) alloc(0, 1);
  w.putEvent(() => HERE, t++, { kind: "promote", time: 0, objId: foreign, domain: 0 });
  w.flush();
  const input = sink.bytes().slice();
  assert.equal(copyTrace(Reader.fromBytes(input), new MemorySink()), 10_003);
  assert.throws(
    () => subsampled(input, 2),
    (e: unknown) =>
      e instanceof TraceToolError && e.tool === "subsample" && e.file === "in.ctf" &&
      /^object 10000 is promoted by domain 0, which did not allocate it/.test(e.problem),
  );
});

Deno.test("the writer refuses to promote an id it has not given (memtrace's Invalid ID in promotion)", () => {
  const w = Writer.create(new MemorySink(), INFO);
  assert.throws(() => w.putPromote(1_000_010, 0), {
    name: "MemtraceArgumentError",
    message: "Invalid ID in promotion",
  });
});
