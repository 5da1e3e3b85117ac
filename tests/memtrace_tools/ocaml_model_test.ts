// The pieces of OCaml the tools' outputs depend on, against what OCaml 5.3.0 itself printed
// (tests/fixtures/memtrace-tools/extra/ocaml_hashtbl.* and ocaml_printf.*): Hashtbl.hash,
// Hashtbl's bucket order through growth, removal and filter_map_inplace, Printf's float and %x
// conversions; and String.compare's byte order, Random's default state.
import assert from "node:assert/strict";
import { OCamlRandomState } from "../../lib/tracer/mod.ts";
import { OCAML_DEFAULT_RANDOM_SEED } from "../../lib/memtrace_tools/mod.ts";
import { camlHash, camlHashBytes } from "../../lib/memtrace_tools/_hash.ts";
import { OCamlHashtbl, ShadowingMap } from "../../lib/memtrace_tools/_hashtbl.ts";
import { printfE, printfF, printfHex } from "../../lib/memtrace_tools/_printf.ts";
import { compareOCamlStrings } from "../../lib/memtrace_tools/_strings.ts";
import { EXTRA, text } from "./_fixtures.ts";

const hashLines = text(EXTRA, "ocaml_hashtbl.txt").split("\n");
const lastInt = (line: string) => Number(/(-?\d+)$/.exec(line)![1]);

// The values of ocaml_hashtbl.ml, in its order.
const STRINGS = [
  "",
  "a",
  "ab",
  "abc",
  "abcd",
  "abcde",
  "Main.main",
  "Stdlib__List.map",
  "été",
  "\u{1F600}",
  "x".repeat(100),
  "<unknown>",
  "??",
];
const PAIRS: [string, string][] = [
  ["lib.ml", "Lib.f"],
  ["", ""],
  ["<unknown>", "??"],
  ["??", "#4"],
  ["a.ml", "é"],
];
const INTS = [0, 1, -1, 42, 2 ** 30, -(2 ** 30), 2 ** 40, -(2 ** 40), 123456789012];

Deno.test("camlHash equals OCaml's Hashtbl.hash on strings, string pairs and ints", () => {
  let i = 0;
  for (const s of STRINGS) {
    const line = hashLines[i++];
    assert.ok(line.startsWith("string "), line);
    assert.equal(camlHash(s), lastInt(line), `Hashtbl.hash ${JSON.stringify(s)}`);
    assert.equal(camlHashBytes(new TextEncoder().encode(s)), lastInt(line));
  }
  for (const p of PAIRS) {
    const line = hashLines[i++];
    assert.ok(line.startsWith("pair "), line);
    assert.equal(camlHash(p), lastInt(line), `Hashtbl.hash ${JSON.stringify(p)}`);
  }
  for (const n of INTS) {
    const line = hashLines[i++];
    assert.ok(line.startsWith(`int ${n} `), line);
    assert.equal(camlHash(n), lastInt(line), `Hashtbl.hash ${n}`);
  }
});

Deno.test("OCamlHashtbl traverses in OCaml's order through growth, removal and filtering", () => {
  const t = new OCamlHashtbl<number, number>({
    hash: (x) => Math.imul(x, 21089245),
    equal: (a, b) => a === b,
  }, 100);
  const lines = hashLines.filter((l) => / length=\d+ buckets=|^fold:/.test(l));
  let at = 0;
  const show = (name: string) => {
    let s = `${name} length=${t.length} buckets=${t.buckets}:`;
    t.iter((k, d) => {
      s += ` ${k}=${d}`;
    });
    assert.equal(s, lines[at++]);
  };
  assert.equal(t.buckets, 128);
  for (let i = 0; i < 300; i++) t.add(i, i);
  show("added 300");
  for (let i = 0; i < 100; i++) if (i % 3 === 0) t.remove(i);
  t.add(5, 1005);
  t.add(5, 2005);
  t.add(600, 600);
  show("removed, shadowed");
  assert.equal(t.find(5), 2005);
  t.remove(5);
  show("unshadowed");
  assert.equal(t.find(5), 1005);
  t.filterMapInplace((_k, d) => (d % 2 === 1 ? undefined : d * 2));
  show("filtered");
  const folded = t.fold<number[]>((k, _d, acc) => [k, ...acc], []);
  assert.equal(`fold: ${folded.join(" ")}`, lines[at++]);
  for (let i = 1000; i < 2000; i++) t.add(i, -i);
  show("grown");
  assert.equal(at, lines.length);
});

Deno.test("ShadowingMap keeps OCaml's add/remove shadowing", () => {
  const m = new ShadowingMap<number, string>();
  m.add(1, "a");
  m.add(1, "b");
  m.add(1, "c");
  assert.equal(m.find(1), "c");
  m.remove(1);
  assert.equal(m.find(1), "b");
  m.remove(1);
  assert.equal(m.find(1), "a");
  assert.ok(m.mem(1));
  m.remove(1);
  assert.ok(!m.mem(1));
  m.remove(1);
  assert.equal(m.find(1), undefined);
});

const bits = new BigInt64Array(1);
const asFloat = new Float64Array(bits.buffer);

Deno.test("printfF, printfE and printfHex print what OCaml's Printf prints", () => {
  const lines = text(EXTRA, "ocaml_printf.txt").split("\n").filter((l) => l !== "");
  let checked = 0;
  for (const line of lines) {
    const m = /^(int )?(-?\d+) (\S+) \|(.*)\|$/.exec(line);
    assert.ok(m !== null, line);
    const [, isInt, num, conv, want] = m;
    let got: string;
    if (isInt) got = printfHex(Number(num));
    else {
      bits[0] = BigInt(num);
      const x = asFloat[0];
      const f = /^%(\d*)\.(\d)([fe])$/.exec(conv);
      if (f !== null) {
        const [, width, precision, kind] = f; // no width: Number("") is 0, the default
        got = (kind === "e" ? printfE : printfF)(x, Number(precision), Number(width));
      } else if (conv === "%x") {
        const n = Math.trunc(x);
        if (!Number.isSafeInteger(n)) continue; // OCaml's truncate is undefined there
        got = printfHex(n);
      } else throw new Error(`unexpected conversion in ${line}`);
    }
    assert.equal(got, want, line);
    checked++;
  }
  assert.ok(checked > 3000, `only ${checked} lines checked`);
});

Deno.test("compareOCamlStrings orders by UTF-8 bytes, as OCaml's String.compare", () => {
  const words = ["b", "a", "\u{1F600}", "\uFF21", "é", "ab", "", "z\uE000", "z\u{10000}"];
  const enc = new TextEncoder();
  const byBytes = (a: string, b: string) => {
    const x = enc.encode(a), y = enc.encode(b);
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
    return x.length - y.length;
  };
  const want = words.slice().sort(byBytes);
  assert.deepEqual(words.slice().sort(compareOCamlStrings), want);
  // JavaScript's own order differs on these (U+FF21 vs the surrogate pair of U+1F600).
  assert.notDeepEqual(words.slice().sort(), want);
});

Deno.test("subsample's generator starts from OCaml 5's default Random state", () => {
  // stdlib/random.ml, mk_default: "the state obtained with [State.make [| 314159265 |]]".
  assert.deepEqual(OCamlRandomState.make(OCAML_DEFAULT_RANDOM_SEED).words(), [
    -6196874289567705097n,
    586573249833713189n,
    -8591268803865043407n,
    6388613595849772044n,
  ]);
});
