/**
 * Property tests of the memtrace codec: whatever event stream is written (through
 * `MultiplexedWriter.putEvent`, or through plain per-domain `Writer`s) reads back identically,
 * after the documented clamping of location fields, the unknown-location rule for oversized
 * location lists and the NUL cut of strings. Fixed seeds: every run checks the same cases.
 */
import { mulberry32 } from "../prng.ts";
import fc from "fast-check";
import assert from "node:assert/strict";
import {
  AllocationSource,
  AllocEvent,
  CollectEvent,
  type DomainId,
  type Info,
  Location,
  type LocationCode,
  MAX_PACKET_SIZE,
  MemorySink,
  MemtraceArgumentError,
  MultiplexedWriter,
  OBJ_IDS_PER_CHUNK,
  PromoteEvent,
  Reader,
  Writer,
} from "../../lib/memtrace/mod.ts";
import { sized } from "../tier.ts";

const MAX = Number.MAX_SAFE_INTEGER;
/** Frames that always fit in one backtrace: 4096 bytes hold 409 never-seen codes (10 bytes each). */
const SAFE_FRAMES = 400;

// ---------------------------------------------------------------------------------------------
// The model: what a reader must return for what was written.

interface PlainLoc {
  filename: string;
  line: number;
  startChar: number;
  endChar: number;
  defname: string;
}

const utf8 = new TextEncoder();

function cutNul(s: string): string {
  const i = s.indexOf("\0");
  return i < 0 ? s : s.slice(0, i);
}

function clamp(n: number, lim: number): number {
  return n < 0 || n > lim ? lim : n;
}

function plain(l: Location): PlainLoc {
  return {
    filename: l.filename,
    line: l.line,
    startChar: l.startChar,
    endChar: l.endChar,
    defname: l.defname,
  };
}

/** The location list a reader returns for a code defined as `locs`. */
function expectedLocs(locs: readonly Location[]): PlainLoc[] {
  let worst = 8 + 1;
  for (const l of locs) {
    worst += 6 + utf8.encode(l.filename).length + 1 + utf8.encode(l.defname).length + 1;
  }
  if (locs.length > 255 || worst > 4096) return [plain(Location.unknown)];
  return locs.map((l) => ({
    filename: cutNul(l.filename),
    line: clamp(l.line, 0xfffff),
    startChar: clamp(l.startChar, 0xff),
    endChar: clamp(l.endChar, 0x3ff),
    defname: cutNul(l.defname),
  }));
}

function expectedInfo(info: Info): Info {
  const ctx = info.context === undefined ? "" : cutNul(info.context);
  return {
    ...info,
    executableName: cutNul(info.executableName),
    hostName: cutNul(info.hostName),
    ocamlRuntimeParams: cutNul(info.ocamlRuntimeParams),
    context: ctx === "" ? undefined : ctx,
  };
}

/** An event as compared: plain data, times relative to the trace start. */
interface Got {
  time: number;
  kind: "alloc" | "promote" | "collect";
  objId: number;
  domain: number;
  length?: number;
  nsamples?: number;
  source?: number;
  commonPrefix?: number;
  backtrace?: number[];
}

function commonPrefixLen(a: readonly number[], b: readonly number[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

// ---------------------------------------------------------------------------------------------
// Scenarios: a pool of location codes with their locations, and commands interpreted against it.

interface AllocCmd {
  t: "alloc";
  dom: number;
  dt: number;
  length: number;
  nsamples: number;
  source: AllocationSource;
  /** Frames kept (caller side) from this domain's previous callstack. */
  keep: number;
  /** Frames added after them (indices into the pool). */
  add: number[];
  /** Frames taken from the pool in order, so that every code of a big pool gets used. */
  fresh: number;
  /** Recursion: a segment of the stack repeated. */
  rec: { from: number; len: number; times: number } | null;
  /** Callee-side junk left out with `dropSlots` (plain Writer only). */
  drop: number[];
}

interface RefCmd {
  t: "promote" | "collect";
  dom: number;
  dt: number;
  pick: number;
}

type Cmd = AllocCmd | RefCmd;

interface Scenario {
  info: Info;
  /** domains[0] is the initial domain. */
  domains: DomainId[];
  codes: LocationCode[];
  locs: Location[][];
  cmds: Cmd[];
  idsPerChunk: number | undefined;
  maxFrames: number;
}

const codeArb = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 400 }) },
  { weight: 3, arbitrary: fc.integer({ min: MAX - 1000, max: MAX }) },
  { weight: 3, arbitrary: fc.integer({ min: -MAX, max: MAX }) },
  { weight: 1, arbitrary: fc.integer({ min: -MAX, max: -MAX + 1000 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(0, 1, 252, 253, 65535, 65536, 2 ** 31, 2 ** 32 - 1, 2 ** 32, -1),
  },
);

const nameArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("a.ml", "lib/b.ml", "<unknown>", "", "日本語.ml") },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 70 }).map((i) => `f${i}.ml`) },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 6 }) },
  { weight: 1, arbitrary: fc.constantFrom("nul\0cut", "\0", "x\0y\0z", "a\0b") },
);

const fieldArb = (lim: number) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: 0, max: lim }) },
    { weight: 1, arbitrary: fc.integer({ min: lim + 1, max: 2 ** 40 }) },
    { weight: 1, arbitrary: fc.integer({ min: -(2 ** 40), max: -1 }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(lim, lim + 1, -1, 2 ** 31 - 1, -(2 ** 31), 2 ** 32, MAX, -MAX),
    },
  );

const locArb = fc.record({
  filename: nameArb,
  line: fieldArb(0xfffff),
  startChar: fieldArb(0xff),
  endChar: fieldArb(0x3ff),
  defname: nameArb,
}).map((r) => new Location(r.filename, r.line, r.startChar, r.endChar, r.defname));

const locListArb: fc.Arbitrary<Location[]> = fc.oneof(
  { weight: 30, arbitrary: fc.array(locArb, { minLength: 1, maxLength: 3 }) },
  { weight: 2, arbitrary: fc.constant<Location[]>([]) },
  // Long inline chains around the 255-entry limit.
  {
    weight: 1,
    arbitrary: fc.tuple(locArb, fc.integer({ min: 250, max: 260 })).map(([l, n]) =>
      Array.from(
        { length: n },
        (_, i) => new Location(l.filename, i, l.startChar, l.endChar, l.defname),
      )
    ),
  },
  // Names around the 4096-byte worst-case limit.
  {
    weight: 1,
    arbitrary: fc.tuple(locArb, fc.integer({ min: 4060, max: 4100 })).map(([l, n]) => [
      new Location("F".repeat(n), l.line, l.startChar, l.endChar, "d"),
    ]),
  },
);

const dtArb = fc.oneof(
  { weight: 12, arbitrary: fc.integer({ min: 0, max: 3000 }) },
  { weight: 4, arbitrary: fc.constant(0) },
  { weight: 2, arbitrary: fc.integer({ min: 1_000_000, max: 29_000_000 }) },
  { weight: 1, arbitrary: fc.integer({ min: 30_000_001, max: 400_000_000 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(30_000_000, 30_000_001, 2 ** 25 - 1, 2 ** 25, 2 ** 25 + 1),
  },
);

const lengthArb = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 1, max: 16 }) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 1000 }) },
  { weight: 1, arbitrary: fc.constantFrom(0, 17, 252, 253, 65535, 65536, 2 ** 31 - 1) },
  { weight: 1, arbitrary: fc.integer({ min: 2 ** 31, max: MAX }) },
);

const nsamplesArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant(1) },
  { weight: 2, arbitrary: fc.integer({ min: 2, max: 300 }) },
  { weight: 1, arbitrary: fc.integer({ min: 2 ** 31, max: 2 ** 45 }) },
);

const sourceArb = fc.oneof(
  { weight: 6, arbitrary: fc.constant(AllocationSource.Minor) },
  { weight: 1, arbitrary: fc.constant(AllocationSource.Major) },
  { weight: 1, arbitrary: fc.constant(AllocationSource.External) },
);

function allocCmdArb(opts: { bigAdds: boolean; freshMax: number }): fc.Arbitrary<AllocCmd> {
  return fc.record({
    t: fc.constant("alloc" as const),
    dom: fc.nat(15),
    dt: dtArb,
    length: lengthArb,
    nsamples: nsamplesArb,
    source: sourceArb,
    keep: fc.oneof(fc.constant(0), fc.nat(10), fc.nat(SAFE_FRAMES), fc.constant(1e9)),
    add: fc.oneof(
      { weight: 10, arbitrary: fc.array(fc.nat(), { maxLength: 12 }) },
      {
        weight: opts.bigAdds ? 1 : 0,
        arbitrary: fc.array(fc.nat(), { minLength: 100, maxLength: SAFE_FRAMES }),
      },
    ),
    fresh: opts.freshMax > 0
      ? fc.oneof(fc.constant(0), fc.integer({ min: 1, max: opts.freshMax }))
      : fc.constant(0),
    rec: fc.option(
      fc.record({
        from: fc.nat(),
        len: fc.integer({ min: 1, max: 6 }),
        times: fc.integer({ min: 1, max: 80 }),
      }),
      { freq: 4, nil: null },
    ),
    drop: fc.array(fc.nat(), { maxLength: 3 }),
  });
}

const refCmdArb: fc.Arbitrary<RefCmd> = fc.record({
  t: fc.constantFrom("promote" as const, "collect" as const),
  dom: fc.nat(15),
  dt: dtArb,
  pick: fc.nat(),
});

const infoArb = (initialDomain: DomainId): fc.Arbitrary<Info> =>
  fc.record({
    sampleRate: fc.oneof(fc.double(), fc.constantFrom(1e-4, 2e-5, 0.01, 1)),
    wordSize: fc.oneof(fc.constant(64), fc.integer({ min: 0, max: 255 })),
    executableName: nameArb,
    hostName: fc.string({ unit: "binary", maxLength: 20 }),
    ocamlRuntimeParams: nameArb,
    pid: fc.oneof(
      fc.bigInt({ min: 1n, max: 4_000_000n }),
      fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    ),
    initialDomain: fc.constant(initialDomain),
    startTime: fc.oneof(
      fc.integer({ min: 0, max: 2 ** 51 }),
      fc.integer({ min: 1.7e15, max: 1.8e15 }),
      fc.integer({ min: -(2 ** 50), max: -1 }),
      fc.constantFrom(0, 23897423, 2 ** 25 - 1, -1, -(2 ** 25)),
    ),
    context: fc.option(nameArb, { nil: undefined }),
  });

function scenarioArb(opts: {
  maxCodes: number;
  maxCmds: number;
  bigAdds: boolean;
  freshMax: number;
  smallChunks: boolean;
}): fc.Arbitrary<Scenario> {
  const domainsArb = fc.uniqueArray(
    fc.oneof(
      { weight: 8, arbitrary: fc.integer({ min: 0, max: 6 }) },
      { weight: 1, arbitrary: fc.constantFrom(255, 256, 65535) },
    ),
    { minLength: 1, maxLength: 5 },
  );
  const poolArb = fc.uniqueArray(fc.tuple(codeArb, locListArb), {
    minLength: 1,
    maxLength: opts.maxCodes,
    selector: (t) => t[0],
    size: "medium",
  });
  const cmdArb = fc.oneof(
    { weight: 5, arbitrary: allocCmdArb(opts) as fc.Arbitrary<Cmd> },
    { weight: 2, arbitrary: refCmdArb as fc.Arbitrary<Cmd> },
  );
  return domainsArb.chain((domains) =>
    fc.record({
      info: infoArb(domains[0]),
      domains: fc.constant(domains),
      pool: poolArb,
      cmds: fc.array(cmdArb, { maxLength: opts.maxCmds, size: "medium" }),
      idsPerChunk: opts.smallChunks
        ? fc.option(fc.integer({ min: 1, max: 40 }), { freq: 2, nil: undefined })
        : fc.constant(undefined),
    }).map((r): Scenario => ({
      info: r.info,
      domains: r.domains,
      codes: r.pool.map((p) => p[0]),
      locs: r.pool.map((p) => p[1]),
      cmds: r.cmds,
      idsPerChunk: r.idsPerChunk,
      maxFrames: SAFE_FRAMES,
    }))
  );
}

/** Builds the next callstack (caller → callee) of a domain. */
function buildStack(
  prev: readonly number[],
  cmd: AllocCmd,
  codes: readonly number[],
  cursor: { at: number },
  maxFrames: number,
): number[] {
  const s = prev.slice(0, Math.min(cmd.keep, prev.length));
  for (const i of cmd.add) s.push(codes[i % codes.length]);
  for (let k = 0; k < cmd.fresh; k++) s.push(codes[cursor.at++ % codes.length]);
  if (cmd.rec !== null && s.length > 0) {
    const from = cmd.rec.from % s.length;
    const seg = s.slice(from, from + cmd.rec.len);
    for (let k = 0; k < cmd.rec.times && s.length < maxFrames; k++) s.push(...seg);
  }
  return s.slice(0, maxFrames);
}

interface Written {
  bytes: Uint8Array;
  expected: Got[];
  /** Every code of every written backtrace. */
  usedCodes: Set<number>;
  /** How many times the writer asked for each code's locations. */
  decodeCalls: Map<number, number>;
}

function decoderFor(sc: Scenario, calls: Map<number, number>): (c: number) => readonly Location[] {
  const table = new Map<number, Location[]>();
  sc.codes.forEach((c, i) => table.set(c, sc.locs[i]));
  return (c) => {
    calls.set(c, (calls.get(c) ?? 0) + 1);
    const l = table.get(c);
    assert.ok(l !== undefined, `decode asked for a code never written: ${c}`);
    return l;
  };
}

/** What a scenario's writer was given, to compare with what reads back; also the state both
 * ways of writing share: each domain's last callstack, the ids allocated so far. */
class Recorder {
  readonly expected: Got[] = [];
  /** Every code of every written backtrace. */
  readonly usedCodes = new Set<number>();
  readonly #prev = new Map<DomainId, number[]>();
  readonly #allocated: number[] = [];
  #minId = Infinity;
  readonly #cursor = { at: 0 };
  readonly #sc: Scenario;
  #t: number;

  constructor(sc: Scenario) {
    this.#sc = sc;
    this.#t = sc.info.startTime;
  }

  /** Advances the clock by the command's delay; returns the command's time and domain. */
  step(cmd: Cmd): { t: number; dom: DomainId } {
    this.#t += cmd.dt;
    return { t: this.#t, dom: this.#sc.domains[cmd.dom % this.#sc.domains.length] };
  }

  /** The callstack (caller → callee) of the next allocation of `dom`. */
  nextStack(dom: DomainId, cmd: AllocCmd): number[] {
    const sc = this.#sc;
    return buildStack(this.#prev.get(dom) ?? [], cmd, sc.codes, this.#cursor, sc.maxFrames);
  }

  /** Records allocation `id` of `stack` (from {@linkcode nextStack}). */
  alloc(t: number, dom: DomainId, cmd: AllocCmd, id: number, stack: number[]): void {
    this.expected.push({
      time: t - this.#sc.info.startTime,
      kind: "alloc",
      objId: id,
      domain: dom,
      length: cmd.length,
      nsamples: cmd.nsamples,
      source: cmd.source,
      commonPrefix: commonPrefixLen(this.#prev.get(dom) ?? [], stack),
      backtrace: stack,
    });
    for (const c of stack) this.usedCodes.add(c);
    this.#prev.set(dom, stack);
    this.#allocated.push(id);
    this.#minId = Math.min(this.#minId, id);
  }

  /** Picks the object of a promote/collect; promote ids must not exceed the writer's next id
   * (`limit`). Undefined when there is none. */
  pick(cmd: RefCmd, limit: number): number | undefined {
    const allocated = this.#allocated;
    if (allocated.length === 0) return undefined;
    const id = allocated[cmd.pick % allocated.length];
    if (id < limit) return id;
    return this.#minId < limit ? this.#minId : undefined;
  }

  /** What was written to `sink`, and what should read back. */
  written(sink: MemorySink, decodeCalls: Map<number, number>): Written {
    const bytes = sink.bytes().slice();
    return { bytes, expected: this.expected, usedCodes: this.usedCodes, decodeCalls };
  }

  /** Records a promotion or collection. */
  ref(t: number, dom: DomainId, cmd: RefCmd, id: number): void {
    this.expected.push({ time: t - this.#sc.info.startTime, kind: cmd.t, objId: id, domain: dom });
  }
}

/** Writes a scenario through `MultiplexedWriter.putEvent`. */
function writeMultiplexed(sc: Scenario): Written {
  const sink = new MemorySink();
  const opts = sc.idsPerChunk === undefined ? {} : { idsPerChunk: sc.idsPerChunk };
  const mw = MultiplexedWriter.create(sink, sc.info, opts);
  const decodeCalls = new Map<number, number>();
  const decode = decoderFor(sc, decodeCalls);
  const rec = new Recorder(sc);
  for (const cmd of sc.cmds) {
    const { t, dom } = rec.step(cmd);
    if (cmd.t === "alloc") {
      const stack = rec.nextStack(dom, cmd);
      const id = mw.nextAllocId(dom);
      const bt = Float64Array.from(stack);
      const ev = new AllocEvent(id, cmd.length, dom, cmd.nsamples, cmd.source, bt, bt.length, 0);
      mw.putEvent(decode, t, ev);
      rec.alloc(t, dom, cmd, id, stack);
    } else {
      const id = rec.pick(cmd, cmd.t === "promote" ? mw.nextAllocId(dom) : Infinity);
      if (id === undefined) continue;
      const ev = cmd.t === "promote" ? new PromoteEvent(id, dom) : new CollectEvent(id, dom);
      mw.putEvent(decode, t, ev);
      rec.ref(t, dom, cmd, id);
    }
  }
  mw.flush();
  return rec.written(sink, decodeCalls);
}

/** Writes a scenario through one plain `Writer` per domain (`Writer.create` + `forDomain`),
 * with callee-first callstacks, some of them with a dropped callee-side suffix. Some allocations
 * (all with `predictAll`) ask `nextAllocId` first, as the multiplexer does. */
function writePlain(sc: Scenario, predictAll = false): Written {
  const sink = new MemorySink();
  const opts = sc.idsPerChunk === undefined ? {} : { idsPerChunk: sc.idsPerChunk };
  const main = Writer.create(sink, sc.info, opts);
  const writers = new Map<DomainId, Writer>([[sc.info.initialDomain, main]]);
  const writerFor = (d: DomainId): Writer => {
    let w = writers.get(d);
    if (w === undefined) {
      w = main.forDomain(d);
      assert.equal(w.domain, d);
      writers.set(d, w);
    }
    return w;
  };
  const decodeCalls = new Map<number, number>();
  const decode = decoderFor(sc, decodeCalls);
  const rec = new Recorder(sc);
  let n = 0;
  for (const cmd of sc.cmds) {
    const { t, dom } = rec.step(cmd);
    const w = writerFor(dom);
    if (cmd.t === "alloc") {
      const stack = rec.nextStack(dom, cmd);
      const junk = cmd.drop.map((i) => sc.codes[i % sc.codes.length]);
      const calleeFirst = [...junk, ...stack.slice().reverse()];
      const predicted = predictAll || n % 3 === 0 ? w.nextAllocId() : undefined;
      const alloc = {
        time: t,
        length: cmd.length,
        nsamples: cmd.nsamples,
        source: cmd.source,
        callstack: calleeFirst,
        decode,
        dropSlots: junk.length,
      };
      const id = n++ % 2 === 0 ? w.putAlloc(alloc) : w.putAllocBacktraceSuffix(alloc);
      if (predicted !== undefined) assert.equal(id, predicted);
      rec.alloc(t, dom, cmd, id, stack);
    } else {
      const id = rec.pick(cmd, cmd.t === "promote" ? w.nextAllocId() : Infinity);
      if (id === undefined) continue;
      if (cmd.t === "promote") w.putPromote(t, id);
      else w.putCollect(t, id);
      rec.ref(t, dom, cmd, id);
    }
  }
  for (const w of writers.values()) if (w !== main) w.flush();
  main.close();
  return rec.written(sink, decodeCalls);
}

function toGot(time: number, ev: AllocEvent | PromoteEvent | CollectEvent, parse: boolean): Got {
  if (ev.kind !== "alloc") return { time, kind: ev.kind, objId: ev.objId, domain: ev.domain };
  return {
    time,
    kind: "alloc",
    objId: ev.objId,
    domain: ev.domain,
    length: ev.length,
    nsamples: ev.nsamples,
    source: ev.source,
    commonPrefix: ev.commonPrefix,
    backtrace: parse ? ev.backtrace() : [],
  };
}

function readBack(bytes: Uint8Array, parse: boolean): { reader: Reader; events: Got[] } {
  const warnings: string[] = [];
  const reader = Reader.fromBytes(bytes, { onWarning: (m) => warnings.push(m) });
  const events: Got[] = [];
  reader.iter((dt, ev) => {
    if (!parse && ev.kind === "alloc") assert.equal(ev.backtraceLength, 0);
    events.push(toGot(dt, ev, parse));
  }, { parseBacktraces: parse });
  assert.deepEqual(warnings, []);
  return { reader, events };
}

/** Packet sizes and alloc-id ranges, from the headers (v3, 68-byte headers). */
function packets(bytes: Uint8Array): { off: number; size: number; ids: [number, number] }[] {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: { off: number; size: number; ids: [number, number] }[] = [];
  let off = 0;
  while (off < bytes.length) {
    assert.equal(v.getUint32(off, true), 0xc1fc1fc1);
    const size = v.getUint32(off + 4, true) / 8;
    const ids: [number, number] = [
      Number(v.getBigInt64(off + 52, true)),
      Number(v.getBigInt64(off + 60, true)),
    ];
    out.push({ off, size, ids });
    off += size;
  }
  assert.equal(off, bytes.length);
  return out;
}

function byDomain(evs: Got[]): Map<number, Got[]> {
  const m = new Map<number, Got[]>();
  for (const e of evs) {
    let l = m.get(e.domain);
    if (l === undefined) m.set(e.domain, l = []);
    l.push(e);
  }
  return m;
}

function withoutBacktrace(evs: Got[]): Got[] {
  return evs.map((e) => e.kind === "alloc" ? { ...e, backtrace: [] } : e);
}

/** Checks everything a reader returns against what was written. */
function checkRoundTrip(sc: Scenario, w: Written, ordered: boolean): void {
  for (const p of packets(w.bytes)) assert.ok(p.size <= MAX_PACKET_SIZE, `packet of ${p.size}`);
  for (const parse of [true, false]) {
    const { reader, events } = readBack(w.bytes, parse);
    assert.deepEqual(reader.info, expectedInfo(sc.info));
    assert.equal(reader.sizeBytes(), w.bytes.length);
    const want = parse ? w.expected : withoutBacktrace(w.expected);
    if (ordered) assert.deepEqual(events, want);
    else assert.deepEqual(byDomain(events), byDomain(want));
    if (!parse) continue;
    // Object ids are unique and increase within a domain.
    const allocIds = events.filter((e) => e.kind === "alloc").map((e) => e.objId);
    assert.equal(new Set(allocIds).size, allocIds.length);
    for (const evs of byDomain(events).values()) {
      const ids = evs.filter((e) => e.kind === "alloc").map((e) => e.objId);
      for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1] < ids[i]);
    }
    // Every code used has the locations it was written with (after clamping and cuts).
    const byCode = new Map<number, Location[]>();
    sc.codes.forEach((c, i) => byCode.set(c, sc.locs[i]));
    for (const code of w.usedCodes) {
      const want = expectedLocs(byCode.get(code)!);
      if (code === 0 && !w.decodeCalls.has(0)) {
        // memtrace's caches start zeroed, so code 0 is a cache hit until bucket 0 is reused: it
        // is never defined (memtrace does the same), and looking it up fails.
        assert.throws(() => reader.lookupLocationCode(0), MemtraceArgumentError);
        continue;
      }
      assert.deepEqual(reader.lookupLocationCode(code).map(plain), want, `code ${code}`);
    }
  }
}

// ---------------------------------------------------------------------------------------------

Deno.test("memtrace write→read identity (fast-check, fixed seeds)", async (t) => {
  // Shrinking is capped (a count, not a time) so that a regression fails in seconds.
  const general = fc.limitShrink(
    scenarioArb({ maxCodes: 60, maxCmds: 120, bigAdds: true, freshMax: 0, smallChunks: true }),
    300,
  );

  await t.step("MultiplexedWriter.putEvent: several domains interleaved (300 runs)", () => {
    fc.assert(
      fc.property(general, (sc) => checkRoundTrip(sc, writeMultiplexed(sc), true)),
      { seed: 42, numRuns: sized(300, 60) },
    );
  });

  await t.step("plain Writer + forDomain, callee-first stacks, dropped slots (300 runs)", () => {
    fc.assert(
      fc.property(general, (sc) => checkRoundTrip(sc, writePlain(sc), false)),
      { seed: 4242, numRuns: sized(300, 60) },
    );
  });

  await t.step("both writers produce the same events for one domain (100 runs)", () => {
    const oneDomain = general.map((sc) => ({ ...sc, domains: [sc.info.initialDomain] }));
    fc.assert(
      fc.property(oneDomain, (sc) => {
        const a = writeMultiplexed(sc), b = writePlain(sc, true);
        // Same encoder underneath: dropped callee-side slots are never encoded, and the
        // reversal done by putEvent gives the callee-first stacks given to putAlloc. (Asking
        // nextAllocId may flush early, so the plain writer asks it too here.)
        assert.deepEqual(a.bytes, b.bytes);
        checkRoundTrip(sc, a, true);
        checkRoundTrip(sc, b, true);
      }),
      { seed: 7, numRuns: sized(100, 20) },
    );
  });

  await t.step("thousands of distinct location codes, many packets (6 runs)", () => {
    const big = fc.record({
      codes: fc.uniqueArray(codeArb, { minLength: 2500, maxLength: 4000 }),
      salt: fc.integer(),
      cmds: fc.array(
        fc.oneof(
          { weight: 5, arbitrary: allocCmdArb({ bigAdds: false, freshMax: 300 }) },
          { weight: 1, arbitrary: refCmdArb },
        ) as fc.Arbitrary<Cmd>,
        { minLength: 150, maxLength: 300 },
      ),
      info: infoArb(0),
    }).map((r): Scenario =>
      summarized({
        info: r.info,
        domains: [0, 1, 2],
        codes: r.codes,
        locs: r.codes.map((c, i) => synthLocs(c, r.salt + i)),
        cmds: r.cmds,
        idsPerChunk: undefined,
        maxFrames: SAFE_FRAMES,
      })
    );
    fc.assert(
      fc.property(fc.limitShrink(big, 20), (sc) => {
        const w = writeMultiplexed(sc);
        assert.ok(w.usedCodes.size >= 1000, `only ${w.usedCodes.size} codes used`);
        assert.ok(packets(w.bytes).length > 20);
        checkRoundTrip(sc, w, true);
        checkRoundTrip(sc, writePlain(sc), false);
      }),
      { seed: 1234, numRuns: sized(6, 2) },
    );
  });

  await t.step("more than 10,000 allocations: object-id chunks run out (4 runs)", () => {
    const many = fc.record({
      seed: fc.integer(),
      n: fc.integer({ min: 10_001, max: 24_000 }),
      ndom: fc.integer({ min: 1, max: 3 }),
      info: infoArb(0),
    }).map((r): Scenario => {
      const rnd = mulberry32(r.seed);
      const codes = Array.from({ length: 500 }, (_, i) => i * 7919 + 1);
      const cmds: Cmd[] = [];
      for (let allocs = 0; allocs < r.n;) {
        const dom = Math.floor(rnd() * r.ndom);
        const x = rnd();
        if (x < 0.7) {
          allocs++;
          cmds.push({
            t: "alloc",
            dom,
            dt: Math.floor(rnd() * 50),
            length: 1 + Math.floor(rnd() * 40),
            nsamples: rnd() < 0.9 ? 1 : 2,
            source: rnd() < 0.9 ? AllocationSource.Minor : AllocationSource.Major,
            keep: Math.floor(rnd() * 12),
            add: Array.from({ length: Math.floor(rnd() * 5) }, () => Math.floor(rnd() * 1e6)),
            fresh: 0,
            rec: null,
            drop: [],
          });
        } else {
          cmds.push({
            t: x < 0.85 ? "promote" : "collect",
            dom,
            dt: Math.floor(rnd() * 50),
            pick: Math.floor(rnd() * 1e9),
          });
        }
      }
      return summarized({
        info: r.info,
        domains: [0, 1, 2],
        codes,
        locs: codes.map((c) => synthLocs(c, r.seed)),
        cmds,
        idsPerChunk: undefined,
        maxFrames: SAFE_FRAMES,
      });
    });
    fc.assert(
      fc.property(fc.limitShrink(many, 10), (sc) => {
        const w = writeMultiplexed(sc);
        const allocs = w.expected.filter((e) => e.kind === "alloc").length;
        assert.ok(allocs > OBJ_IDS_PER_CHUNK, `${allocs} allocations`);
        // No packet's id range straddles a chunk boundary.
        for (const p of packets(w.bytes)) {
          if (p.ids[1] > p.ids[0]) {
            assert.equal(
              Math.floor(p.ids[0] / OBJ_IDS_PER_CHUNK),
              Math.floor((p.ids[1] - 1) / OBJ_IDS_PER_CHUNK),
            );
          }
        }
        checkRoundTrip(sc, w, true);
        checkRoundTrip(sc, writePlain(sc), false);
      }),
      { seed: 99, numRuns: sized(4, 1) },
    );
  });
});

Deno.test("memtrace backtraces beyond the 4096-byte limit", async (t) => {
  const info: Info = {
    sampleRate: 1e-4,
    wordSize: 64,
    executableName: "x",
    hostName: "h",
    ocamlRuntimeParams: "",
    pid: 77n,
    initialDomain: 0,
    startTime: 1_000_000,
    context: undefined,
  };
  const locsOf = (c: number) => [new Location("t.ml", c % 1000, 1, 2, `f${c}`)];

  await t.step("a stack of > 409 new codes keeps its 409 outermost frames (60 runs)", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: MAX }), { minLength: 410, maxLength: 1500 }),
        fc.integer({ min: 0, max: 409 }),
        fc.array(fc.integer({ min: -MAX, max: -1 }), { maxLength: 30 }),
        (stack, k, tail) => {
          const sink = new MemorySink();
          const w = Writer.create(sink, info);
          const put = (t: number, s: number[], len = 2) =>
            w.putAlloc({
              time: t,
              length: len,
              nsamples: 1,
              source: AllocationSource.Minor,
              callstack: s.slice().reverse(),
              decode: locsOf,
            });
          put(1_000_000, stack);
          // The same stack again: nothing new to encode, the reader repeats what it has.
          put(1_000_001, stack, 20);
          // A stack sharing a prefix within the kept part decodes exactly.
          const third = [...stack.slice(0, k), ...tail];
          put(1_000_002, third);
          w.close();
          const { reader, events } = readBack(sink.bytes(), true);
          assert.equal(events.length, 3);
          const kept = stack.slice(0, 409);
          assert.deepEqual(events[0].backtrace, kept);
          assert.equal(events[0].commonPrefix, 0);
          assert.deepEqual(events[1].backtrace, kept);
          assert.equal(events[1].commonPrefix, stack.length);
          assert.deepEqual(events[2].backtrace, third);
          assert.equal(events[2].commonPrefix, k);
          for (const c of kept) assert.deepEqual(reader.lookupLocationCode(c), locsOf(c));
          for (const c of stack.slice(409)) {
            assert.throws(() => reader.lookupLocationCode(c), MemtraceArgumentError);
          }
        },
      ),
      { seed: 5, numRuns: sized(60, 15) },
    );
  });

  await t.step("deep recursion: predicted cache hits fit thousands of frames (40 runs)", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: MAX }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 300, max: 3000 }),
        fc.array(fc.integer({ min: 1, max: 1000 }), { maxLength: 20 }),
        (cycle, times, top) => {
          const sink = new MemorySink();
          const w = Writer.create(sink, info);
          const stack = [...top];
          for (let i = 0; i < times; i++) stack.push(...cycle);
          w.putAlloc({
            time: 2_000_000,
            length: 3,
            nsamples: 1,
            source: AllocationSource.Major,
            callstack: stack.slice().reverse(),
            decode: locsOf,
          });
          w.close();
          const { events } = readBack(sink.bytes(), true);
          assert.equal(events.length, 1);
          assert.deepEqual(events[0].backtrace, stack);
        },
      ),
      { seed: 11, numRuns: sized(40, 10) },
    );
  });
});

// ---------------------------------------------------------------------------------------------

/** Big scenarios print as a summary in counterexamples (the seed and path replay them). */
function summarized(sc: Scenario): Scenario {
  return Object.assign(sc, {
    [fc.toStringMethod]: () =>
      `Scenario{${sc.codes.length} codes, ${sc.cmds.length} commands, info ${
        fc.stringify(sc.info)
      }}`,
  });
}

/** Deterministic locations for big pools: shared file names (move-to-front hits and misses),
 * some oversized fields, some inlined chains. */
function synthLocs(code: number, salt: number): Location[] {
  const rnd = mulberry32((code % 2 ** 31) ^ salt);
  const n = rnd() < 0.1 ? 0 : 1 + Math.floor(rnd() * (rnd() < 0.1 ? 4 : 1));
  return Array.from({ length: n }, () => {
    const big = rnd() < 0.05;
    return new Location(
      `src/m${Math.floor(rnd() * 50)}.ml`,
      big ? 2 ** 21 + Math.floor(rnd() * 100) : Math.floor(rnd() * 5000),
      big ? -1 : Math.floor(rnd() * 200),
      big ? 5000 : Math.floor(rnd() * 900),
      `fn${Math.floor(rnd() * 80)}`,
    );
  });
}
