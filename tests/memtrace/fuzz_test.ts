/**
 * Fuzzing the memtrace reader with seeded byte-level mutations of the whole fixture traces
 * (the structure-aware campaign is fuzz_campaign_test.ts): bit flips, byte
 * overwrites, truncations, splices between fixtures, duplicated and removed ranges, packet
 * shuffles and extreme header fields. Every mutant must either read cleanly or fail with
 * `MemtraceFormatError`; nothing else may escape, and nothing may grow beyond what the input
 * can encode. A failure names the fixture, the mutant index and the mutations, so that it can
 * be reproduced with `mutant(fixture, seed, index)`.
 */
import { concat } from "./fuzz_harness.ts";
import { Rng } from "../prng.ts";
import { sized } from "../tier.ts";
import assert from "node:assert/strict";
import {
  type Event,
  infoLines,
  type Location,
  type LocationCode,
  MemtraceArgumentError,
  MemtraceFormatError,
  MemtraceLimitError,
  Reader,
} from "../../lib/memtrace/mod.ts";
import edge from "../fixtures/memtrace/edge_writer_api.ctf" with { type: "bytes" };
import single from "../fixtures/memtrace/single_1e-4.ctf" with { type: "bytes" };
import external from "../fixtures/memtrace/external_2e-5.ctf" with { type: "bytes" };
import multi from "../fixtures/memtrace/multi_mdtrace_3e-4.renumbered.ctf" with {
  type: "bytes",
};
import ocamlopt from "../fixtures/memtrace/ocamlopt.ctf" with { type: "bytes" };
import listsV1 from "../fixtures/memtrace/lists_and_sets_v1_e8e7dbe.ctf" with {
  type: "bytes",
};

interface Fixture {
  name: string;
  bytes: Uint8Array;
  /** Mutants made from it in the main fuzz test (sized to keep the run short: the v1 trace
   * has backtraces of up to 9,982 frames, so dumping it costs the most). */
  mutants: number;
}

// The quick tier (tests/tier.ts) makes a tenth of the mutants of the costly fixtures (a mutant of
// edge_writer_api.ctf costs about 0.3 ms, one of the v1 trace 200 ms).
const FIXTURES: Fixture[] = [
  { name: "edge_writer_api.ctf", bytes: edge, mutants: 2105 },
  { name: "single_1e-4.ctf", bytes: single, mutants: sized(400, 40) },
  { name: "external_2e-5.ctf", bytes: external, mutants: sized(200, 20) },
  { name: "multi_mdtrace_3e-4.renumbered.ctf", bytes: multi, mutants: sized(200, 20) },
  { name: "ocamlopt.ctf", bytes: ocamlopt, mutants: sized(80, 8) },
  { name: "lists_and_sets_v1_e8e7dbe.ctf", bytes: listsV1, mutants: sized(15, 2) },
];

const SEED = 0x6d656d74; // "memt"

// ---------------------------------------------------------------------------------------------
// Seeded randomness and mutations.

/** Start offsets of the packets of a (possibly damaged) trace, as far as sizes make sense. */
function packetStarts(b: Uint8Array): number[] {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out: number[] = [];
  let off = 0;
  while (off + 8 <= b.length) {
    out.push(off);
    const size = Math.floor(v.getUint32(off + 4, true) / 8);
    if (size < 66) break;
    off += size;
  }
  return out;
}

const SPECIAL_BYTES = [0x00, 0xff, 0x7f, 0x80, 0xfd, 0xfe, 0x01, 0xc1, 0x1f, 0xfc];

/** Offsets of the fields of a v3 packet header, and their widths. */
const HEADER_FIELDS: [number, number][] = [
  [0, 4], // magic
  [4, 4], // size in bits
  [8, 8], // time begin
  [16, 8], // time end
  [24, 4], // flush duration
  [28, 2], // version
  [30, 8], // pid
  [38, 2], // domain (v3)
  [40, 2], // verifier index
  [42, 2], // verifier prediction
  [44, 8], // verifier value
  [52, 8], // alloc id begin
  [60, 8], // alloc id end
];

function extremeValue(rng: Rng, width: number): Uint8Array {
  const out = new Uint8Array(width);
  switch (rng.int(6)) {
    case 0:
      out.fill(0xff);
      break;
    case 1:
      out[width - 1] = 0x80; // most negative
      break;
    case 2:
      out.fill(0xff);
      out[width - 1] = 0x7f; // most positive
      break;
    case 3:
      if (width === 8) out.set([0, 0, 0, 0, 0, 0, 0x20, 0]); // 2^53
      else out[0] = 1;
      break;
    case 4:
      for (let i = 0; i < width; i++) out[i] = rng.int(256);
      break;
    default:
      break; // zero
  }
  return out;
}

/** Applies one random mutation; returns its description. */
function mutateOnce(
  rng: Rng,
  b: Uint8Array,
  others: readonly Fixture[],
): [Uint8Array, string] {
  const n = b.length;
  if (n === 0) return [concat(b, others[0].bytes.subarray(0, 100)), "append 100 bytes"];
  const op = rng.int(10);
  switch (op) {
    case 0: {
      const out = b.slice();
      const k = rng.range(1, 8);
      const at: number[] = [];
      for (let i = 0; i < k; i++) {
        const pos = rng.int(n), bit = rng.int(8);
        out[pos] ^= 1 << bit;
        at.push(pos * 8 + bit);
      }
      return [out, `flip bits ${at.join(",")}`];
    }
    case 1: {
      const out = b.slice();
      const k = rng.range(1, 4);
      const at: string[] = [];
      for (let i = 0; i < k; i++) {
        const pos = rng.int(n);
        out[pos] = rng.chance(0.5) ? rng.pick(SPECIAL_BYTES) : rng.int(256);
        at.push(`${pos}=${out[pos]}`);
      }
      return [out, `overwrite ${at.join(",")}`];
    }
    case 2: {
      const cut = rng.int(n);
      return [b.slice(0, cut), `truncate at ${cut}`];
    }
    case 3: {
      const src = rng.pick(others);
      const len = rng.range(1, Math.min(4096, src.bytes.length));
      const from = rng.int(src.bytes.length - len + 1);
      const at = rng.int(n);
      const over = rng.chance(0.5);
      const piece = src.bytes.subarray(from, from + len);
      const out = over
        ? concat(b.subarray(0, at), piece, b.subarray(Math.min(n, at + len)))
        : concat(b.subarray(0, at), piece, b.subarray(at));
      return [out, `splice ${src.name}[${from},+${len}) ${over ? "over" : "into"} ${at}`];
    }
    case 4: {
      const a = rng.int(n), len = rng.range(1, Math.min(2048, n - a));
      const at = rng.int(n + 1);
      return [
        concat(b.subarray(0, at), b.subarray(a, a + len), b.subarray(at)),
        `duplicate [${a},+${len}) at ${at}`,
      ];
    }
    case 5: {
      const a = rng.int(n), len = rng.range(1, Math.min(2048, n - a));
      return [concat(b.subarray(0, a), b.subarray(a + len)), `remove [${a},+${len})`];
    }
    case 6: {
      // Whole packets: drop, duplicate, swap or move one (keeps each packet well-formed).
      const starts = packetStarts(b);
      if (starts.length < 2) return mutateOnce(rng, b, others);
      const ends = [...starts.slice(1), n];
      const pkts = starts.map((s, i) => b.subarray(s, ends[i]));
      const i = rng.range(1, pkts.length - 1), j = rng.range(0, pkts.length - 1);
      const kind = rng.int(4);
      if (kind === 0) pkts.splice(i, 1);
      else if (kind === 1) pkts.splice(j, 0, pkts[i]);
      else if (kind === 2) [pkts[i], pkts[j]] = [pkts[j], pkts[i]];
      else pkts.splice(j, 0, ...pkts.splice(i, 1));
      return [concat(...pkts), `packets: ${["drop", "dup", "swap", "move"][kind]} ${i} ${j}`];
    }
    case 7: {
      // An extreme value in one header field of one packet.
      const starts = packetStarts(b);
      const s = rng.pick(starts);
      const [off, width] = rng.pick(HEADER_FIELDS);
      const out = b.slice();
      const val = extremeValue(rng, width);
      if (s + off < n) out.set(val.subarray(0, Math.min(width, n - s - off)), s + off);
      return [out, `header field +${off} of packet at ${s} = [${val.join(" ")}]`];
    }
    case 8: {
      // Bit flips within one packet header.
      const s = rng.pick(packetStarts(b));
      const out = b.slice();
      const pos = Math.min(n - 1, s + rng.int(68)), bit = rng.int(8);
      out[pos] ^= 1 << bit;
      return [out, `flip header bit ${pos * 8 + bit}`];
    }
    default: {
      // A vint-like marker followed by large bytes, in the middle of event data.
      const out = b.slice();
      const pos = rng.int(n);
      out[pos] = rng.pick([253, 254, 255]);
      for (let k = 1; k <= 8 && pos + k < n; k++) out[pos + k] = rng.chance(0.5) ? 0xff : 0x7f;
      return [out, `vint marker at ${pos}`];
    }
  }
}

/** Mutant `index` of a fixture: 1 to 3 mutations, fully determined by (seed, index). */
function mutant(f: Fixture, seed: number, index: number): [Uint8Array, string] {
  const rng = new Rng((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const others = FIXTURES.filter((o) => o !== f);
  let b = f.bytes;
  const steps: string[] = [];
  const k = rng.chance(0.7) ? 1 : rng.range(2, 3);
  for (let i = 0; i < k; i++) {
    const [m, d] = mutateOnce(rng, b, others);
    b = m;
    steps.push(d);
  }
  return [b, steps.join("; ")];
}

// ---------------------------------------------------------------------------------------------
// Reading a mutant.

interface Outcome {
  /** Passes (of 3) that completed. */
  clean: number;
  /** Check names of the format errors raised. */
  errors: string[];
  warnings: number;
  events: number;
}

interface Limits {
  /** Bytes of the input. */
  size: number;
}

/** Checks that a failure is the one typed error, well formed. */
function checkFormatError(e: unknown, size: number, where: string): MemtraceFormatError {
  if (!(e instanceof MemtraceFormatError)) {
    const what = e instanceof Error ? `${e.name}: ${e.message}\n${e.stack}` : String(e);
    throw new Error(`${where}: unexpected exception ${what}`, { cause: e });
  }
  const prefix = e instanceof MemtraceLimitError ? "trace exceeds a limit: " : "malformed trace: ";
  assert.ok(e.message.startsWith(prefix), `${where}: message ${e.message}`);
  assert.equal(typeof e.offset, "number", where);
  assert.ok(
    Number.isInteger(e.offset) && e.offset >= 0 && e.offset <= size,
    `${where}: offset ${e.offset} outside [0, ${size}] (${e.message})`,
  );
  return e;
}

/** What a corrupt trace can make the reader build is bounded by its size: each event takes at
 * least 4 bytes, each backtrace codeword (2+ bytes) yields at most 256 frames, location lists
 * hold at most 255 entries. */
function checkBounded(ev: Event, lim: Limits, where: string): void {
  if (ev.kind !== "alloc") return;
  const maxFrames = 128 * lim.size + 256;
  assert.ok(ev.backtraceLength <= maxFrames, `${where}: backtrace of ${ev.backtraceLength}`);
  assert.ok(
    ev.backtraceBuffer.length <= 2 * maxFrames + 64,
    `${where}: backtrace buffer of ${ev.backtraceBuffer.length}`,
  );
}

/** Reads a mutant three ways: with backtraces, without, and dumping every event as text. */
function exercise(bytes: Uint8Array, where: string): Outcome {
  const size = bytes.length;
  const out: Outcome = { clean: 0, errors: [], warnings: 0, events: 0 };
  const onWarning = (m: string) => {
    assert.ok(
      m === "skipping truncated packet" || m.startsWith("skipping bad packet (wrong pid: "),
      `${where}: warning ${m}`,
    );
    out.warnings++;
  };
  let reader: Reader;
  try {
    reader = Reader.fromBytes(bytes, { onWarning });
  } catch (e) {
    out.errors.push(checkFormatError(e, size, `${where} [open]`).check);
    return out;
  }
  assert.equal(reader.sizeBytes(), size);
  infoLines(reader.info, size); // formats the metadata (floats, quoted strings)
  const lim = { size };
  const maxEvents = Math.floor(size / 4) + 1;
  // Unknown codes are remembered: looking one up throws, and a corrupt v1 trace can hold
  // hundreds of thousands of frames of them.
  const unknown = new Set<LocationCode>();
  const lookup = (c: LocationCode): readonly Location[] => {
    if (unknown.has(c)) return [];
    try {
      const locs = reader.lookupLocationCode(c);
      assert.ok(locs.length <= 255, `${where}: ${locs.length} locations for one code`);
      return locs;
    } catch (e) {
      if (!(e instanceof MemtraceArgumentError)) throw e;
      unknown.add(c);
      return [];
    }
  };
  let n = 0;
  const count = () => assert.ok(++n <= maxEvents, `${where}: more events than bytes allow`);
  const passes: [string, () => void][] = [
    ["iter", () =>
      reader.iter((dt, ev) => {
        count();
        assert.ok(Number.isSafeInteger(dt), `${where}: time ${dt}`);
        checkBounded(ev, lim, where);
      })],
    ["iter without backtraces", () =>
      reader.iter((_, ev) => {
        count();
        if (ev.kind === "alloc") assert.equal(ev.backtraceLength, 0);
      }, { parseBacktraces: false })],
    ["dump", () =>
      reader.iter((dt, ev) => {
        count();
        const line = `${dt} ${ev.domain} ${ev.toString(lookup)}`;
        assert.ok(line.length > 0);
      })],
  ];
  for (const [name, pass] of passes) {
    n = 0;
    try {
      pass();
      out.clean++;
    } catch (e) {
      if (e instanceof assert.AssertionError) throw e;
      out.errors.push(checkFormatError(e, size, `${where} [${name}]`).check);
    } finally {
      out.events += n;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

Deno.test("memtrace fuzz: the unmutated fixtures read cleanly", () => {
  for (const f of FIXTURES) {
    const o = exercise(f.bytes, f.name);
    assert.deepEqual(o, { clean: 3, errors: [], warnings: 0, events: o.events }, f.name);
    assert.ok(o.events > 0);
  }
});

Deno.test("memtrace fuzz: seeded mutants of the fixtures", async (t) => {
  const byCheck = new Map<string, number>();
  let total = 0, clean = 0, rejected = 0, warnings = 0;
  for (const f of FIXTURES) {
    await t.step(`${f.name}: ${f.mutants} mutants (seed ${SEED})`, () => {
      for (let i = 0; i < f.mutants; i++) {
        const [bytes, desc] = mutant(f, SEED, i);
        const o = exercise(bytes, `${f.name} seed=${SEED} mutant=${i} (${desc})`);
        total++;
        warnings += o.warnings;
        if (o.clean === 3) clean++;
        if (o.errors.length > 0) rejected++;
        for (const c of o.errors) {
          // "trace format v004, but expected v003" and "trace format v127, …" count as one.
          const key = c.replace(/\d+/g, "N");
          byCheck.set(key, (byCheck.get(key) ?? 0) + 1);
        }
      }
    });
  }
  await t.step("the mutants exercised both outcomes and many checks", () => {
    assert.equal(total, FIXTURES.reduce((n, f) => n + f.mutants, 0));
    assert.ok(total >= sized(2900, 2190));
    assert.ok(clean > total / 20, `only ${clean} clean reads`);
    assert.ok(rejected > total / 4, `only ${rejected} rejected`);
    assert.ok(warnings > 0, "no packet skipped with a warning");
    for (
      const check of [
        "Not a CTF packet",
        "Buffer underflow",
        "alloc id sync",
        "time in packet bounds",
        "cache verification",
      ]
    ) {
      assert.ok((byCheck.get(check) ?? 0) > 0, `no mutant failed "${check}"`);
    }
    assert.ok(byCheck.size >= 10, `only ${byCheck.size} distinct checks: ${[...byCheck.keys()]}`);
  });
});

Deno.test("memtrace fuzz: no mutant grows memory without bound or loops", async (t) => {
  // Mutants aimed at the fields that size things: packet sizes, vints (prefix lengths, counts),
  // codeword counts, header integers. Each read must end, and everything built stays within
  // what the bytes can encode (checked per event in `exercise`).
  const seed = SEED ^ 0x5a5a5a5a;
  for (const f of FIXTURES) {
    const count = Math.max(sized(10, 2), Math.floor(f.mutants / 4));
    await t.step(`${f.name}: ${count} size-field mutants`, () => {
      for (let i = 0; i < count; i++) {
        const rng = new Rng((seed + i * 7919) >>> 0);
        const b = f.bytes.slice();
        const starts = packetStarts(b);
        const desc: string[] = [];
        for (let k = rng.range(1, 4); k > 0; k--) {
          if (rng.chance(0.4)) {
            const s = rng.pick(starts);
            const [off, width] = rng.pick(HEADER_FIELDS.filter(([o]) => o === 4 || o >= 52));
            const val = extremeValue(rng, width);
            if (s + off < b.length) {
              b.set(val.subarray(0, Math.min(width, b.length - s - off)), s + off);
            }
            desc.push(`field +${off} at ${s}`);
          } else {
            const pos = rng.int(b.length);
            b[pos] = rng.pick([0xfd, 0xfe, 0xff, 0xff]);
            for (let j = 1; j <= 8 && pos + j < b.length; j++) b[pos + j] = 0xff;
            desc.push(`big vint at ${pos}`);
          }
        }
        const o = exercise(b, `${f.name} bounded mutant=${i} (${desc.join("; ")})`);
        // Either the header was refused, or each of the three passes ended one way or the other.
        assert.ok(o.clean + o.errors.length === 3 || (o.clean === 0 && o.errors.length === 1));
      }
    });
  }
});
