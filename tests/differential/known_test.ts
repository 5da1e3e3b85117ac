// The checked-in list of known differences: parsing it strictly, and judging results against it.
import assert from "node:assert/strict";
import {
  compareLogs,
  type Comparison,
  differenceKey,
  judge,
  judgeRefusal,
  type KnownDifference,
  KnownDifferencesError,
  parseKnownDifferences,
} from "../../lib/differential/mod.ts";
import { callbackLines, canonical } from "./helpers.ts";

const FILE = "scenarios/known_differences.json";

Deno.test("parseKnownDifferences reads a list of entries", () => {
  const entries: KnownDifference[] = [
    { scenario: "triple_cons", at: "callback 1100", reason: "the remembered set" },
    { scenario: "service", at: "collections", reason: "a later minor collection" },
    { scenario: "a", at: "minor heap", reason: "r" },
    { scenario: "b", at: "overflow", reason: "r" },
  ];
  assert.deepEqual(parseKnownDifferences(JSON.stringify(entries, null, 2), FILE), entries);
  assert.deepEqual(parseKnownDifferences("[]", FILE), []);
});

Deno.test("parseKnownDifferences reads the checked-in list", async () => {
  const text = await Deno.readTextFile(
    new URL("../../scenarios/known_differences.json", import.meta.url),
  );
  const list = parseKnownDifferences(text, FILE);
  assert.equal(new Set(list.map((k) => k.scenario)).size, list.length);
});

/** Asserts that parsing `text` fails with a message equal to `message`. */
function refused(text: string, message: string) {
  assert.throws(
    () => parseKnownDifferences(text, FILE),
    (e: unknown) => {
      assert.ok(e instanceof KnownDifferencesError, String(e));
      assert.equal(e.name, "KnownDifferencesError");
      assert.equal(e.message, message);
      return true;
    },
  );
}

const ok = { scenario: "s", at: "callback 3", reason: "why" };
const list = (...entries: unknown[]) => JSON.stringify(entries);

Deno.test("parseKnownDifferences refuses what is not JSON or not an array, naming the file", () => {
  assert.throws(
    () => parseKnownDifferences("[{", FILE),
    (e: unknown) =>
      e instanceof KnownDifferencesError && e.message.startsWith(`${FILE}: not valid JSON: `),
  );
  refused('{"scenario": "s"}', `${FILE}: expected an array of known differences`);
  refused("null", `${FILE}: expected an array of known differences`);
});

Deno.test("parseKnownDifferences refuses a bad entry, naming the file and the entry", () => {
  refused(list(ok, 3), `${FILE}, entry 2: expected an object`);
  refused(list(null), `${FILE}, entry 1: expected an object`);
  refused(list({ ...ok, note: "x" }), `${FILE}, entry 1: unknown key "note"`);
  refused(
    list(ok, { at: "overflow", reason: "r" }),
    `${FILE}, entry 2: "scenario" must be a scenario name`,
  );
  refused(list({ ...ok, scenario: "" }), `${FILE}, entry 1: "scenario" must be a scenario name`);
});

Deno.test('parseKnownDifferences refuses an "at" other than callback N, collections, minor heap, overflow or not exportable', () => {
  const message = `${FILE}, entry 1: "at" must be "callback N", "collections", "minor heap", ` +
    `"overflow" or "not exportable"`;
  for (
    const at of [
      "callback 0",
      "callback",
      "callback 01",
      "Callback 3",
      "line 3",
      "minorHeap",
      "not-exportable",
      3,
    ]
  ) {
    refused(list({ ...ok, at }), message);
  }
});

Deno.test("parseKnownDifferences refuses a reason that is not one line of text", () => {
  for (const reason of ["two\nlines", "", "   ", 42]) {
    refused(list({ ...ok, reason }), `${FILE}, entry 1: "reason" must be one line of text`);
  }
});

Deno.test("parseKnownDifferences refuses a scenario listed twice", () => {
  refused(
    list(ok, { ...ok, scenario: "t" }, { ...ok, at: "overflow" }),
    `${FILE}, entry 3: scenario "s" is listed twice`,
  );
});

const agree: Comparison = compareLogs(canonical(callbackLines(3)), canonical(callbackLines(3)));
const at2: Comparison = compareLogs(
  canonical(callbackLines(3)),
  canonical(callbackLines(3).slice(0, 1)),
);

Deno.test("differenceKey names where a comparison differs in the list's terms", () => {
  assert.equal(differenceKey(agree), undefined);
  assert.equal(differenceKey(at2), "callback 2");
  assert.equal(differenceKey({ compared: 0, difference: { kind: "overflow" } }), "overflow");
  assert.equal(
    differenceKey({ compared: 0, difference: { kind: "minorHeap", sim: 1, real: 2 } }),
    "minor heap",
  );
  const collections = compareLogs(canonical([]), canonical([], { minorCollections: 9 }));
  assert.equal(differenceKey(collections), "collections");
});

Deno.test("judge says ok, known, unexpected, now agrees or moved", () => {
  const entry: KnownDifference = { scenario: "s", at: "callback 2", reason: "why" };
  const other: KnownDifference = { scenario: "t", at: "overflow", reason: "r" };
  assert.deepEqual(judge("s", agree, []), { kind: "ok" });
  assert.deepEqual(judge("s", agree, [other]), { kind: "ok" });
  assert.deepEqual(judge("s", at2, [other]), { kind: "unexpected" });
  assert.deepEqual(judge("s", at2, [other, entry]), { kind: "known", entry });
  assert.deepEqual(judge("s", agree, [entry]), { kind: "now agrees", entry });
  const at1 = compareLogs(canonical(["a"]), canonical(["b"]));
  assert.deepEqual(judge("s", at1, [entry]), { kind: "moved", entry, now: "callback 1" });
  const collections = compareLogs(canonical([]), canonical([], { majorCycles: 1 }));
  assert.deepEqual(judge("s", collections, [entry]), { kind: "moved", entry, now: "collections" });
});

Deno.test("a scenario listed as not exportable: its refusal is known; exportable again, it is not", () => {
  const refusal: KnownDifference = { scenario: "s", at: "not exportable", reason: "threads" };
  const other: KnownDifference = { scenario: "s", at: "callback 2", reason: "why" };
  assert.deepEqual(judgeRefusal("s", [refusal]), { kind: "known", entry: refusal });
  assert.deepEqual(judgeRefusal("s", []), { kind: "unexpected" });
  assert.deepEqual(judgeRefusal("s", [{ ...refusal, scenario: "t" }]), { kind: "unexpected" });
  assert.deepEqual(judgeRefusal("s", [other]), {
    kind: "moved",
    entry: other,
    now: "not exportable",
  });
  assert.deepEqual(judge("s", agree, [refusal]), { kind: "now exportable", entry: refusal });
  assert.deepEqual(judge("s", at2, [refusal]), { kind: "now exportable", entry: refusal });
});
