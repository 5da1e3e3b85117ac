// Each command's --json names its figures as its text does: every label of the text is a key
// of the JSON, with the same value (rounded as the text rounds it). Run in-process with files and
// consoles stubbed. (`trace info` has its own test, trace_info_test.ts.)
import assert from "node:assert/strict";
import { join } from "node:path";
import d8Image from "../fixtures/runtime_events/d8/18440.events" with { type: "bytes" };
import e10Image from "../fixtures/runtime_events/e10/18448.events" with { type: "bytes" };
import { type EventsCliIO, run as events } from "../../cli/events.ts";
import { run as ocaml } from "../../cli/ocaml.ts";
import { type DiffCliIO, run as diff } from "../../cli/diff.ts";
import { compareLogs, type DiffResult } from "../../lib/differential/mod.ts";
import { scenarios } from "../../scenarios/index.ts";
import { callbackLines, canonical, resultOf } from "../differential/helpers.ts";
import { fakeOcamlopt, ocamlCliIO, testEnv, withTemp } from "../ocaml/helpers.ts";

const files: Record<string, Uint8Array> = { "d8.events": d8Image, "e10.events": e10Image };

function eventsIO() {
  const io = {
    out: "",
    err: "",
    readFile(path: string): Uint8Array {
      const f = files[path];
      if (f === undefined) throw new Deno.errors.NotFound(path);
      return f;
    },
    importModule: () => Promise.reject(new Error("no modules")),
    stdout(text: string) {
      io.out += text;
    },
    stderr(text: string) {
      io.err += text;
    },
  };
  return io satisfies EventsCliIO;
}

// deno-lint-ignore no-explicit-any
async function textAndJson(args: string[]): Promise<{ text: string; json: any }> {
  const t = eventsIO(), j = eventsIO();
  assert.equal(await events(args, t), 0, t.err);
  assert.equal(await events([...args, "--json"], j), 0, j.err);
  return { text: t.out, json: JSON.parse(j.out) };
}

/** Asserts `text` holds `key value` for each key of `obj` given (with `format` of the value). */
function assertLabelled(
  text: string,
  obj: Record<string, unknown>,
  keys: readonly string[],
  format: (key: string, v: unknown) => string = (_k, v) => String(v),
) {
  for (const k of keys) {
    assert.ok(k in obj, `${k} is not a JSON key`);
    const want = `${k} ${format(k, obj[k])}`;
    assert.ok(
      new RegExp(`(^|[ (])${want.replace(/[.()]/g, "\\$&")}([ ,;)]|$)`, "m").test(text),
      `text lacks '${want}'`,
    );
  }
}

/** The table whose header row is `lines[start]`: its header, and the indented rows that follow
 * with as many cells. */
function tableAt(lines: string[], start: number): { head: string[]; rows: string[][] } {
  const cells = (l: string) => l.trim().split(/ {2,}/);
  const head = cells(lines[start]);
  const rows: string[][] = [];
  for (let i = start + 1; i < lines.length; i++) {
    if (!lines[i].startsWith("  ") || cells(lines[i]).length !== head.length) break;
    rows.push(cells(lines[i]));
  }
  return { head, rows };
}

Deno.test("events stats labels every figure with its --json key", async () => {
  for (const file of ["d8.events", "e10.events"]) {
    const { text, json } = await textAndJson(["stats", file]);
    const lines = text.split("\n");
    for (const d of json.domains) {
      const at = lines.indexOf(lines.find((l) => l.startsWith(`domain ${d.domain}:`))!);
      assert.ok(at >= 0, `no line for domain ${d.domain}`);
      const block = lines.slice(at, at + 2).join("\n");
      assertLabelled(block, d, [
        "events",
        "begins",
        "ends",
        "counters",
        "allocs",
        "lifecycles",
        "userEvents",
        "words",
        "lostWords",
        "lostEventsEstimate",
      ]);
      // The phase table: its header names PhaseStats keys, its cells are their values.
      const { head, rows } = tableAt(lines, at + 2);
      assert.equal(rows.length, d.phases.length, `domain ${d.domain}: phase rows`);
      for (const [r, p] of d.phases.entries()) {
        for (const [c, key] of head.entries()) {
          assert.ok(key in p, `${key} is not a key of a phase`);
          assert.equal(rows[r][c], String(p[key]), `${file} domain ${d.domain} ${p.name} ${key}`);
        }
      }
    }
    if (json.domains.length > 1) {
      const at = lines.indexOf("allPhases:");
      assert.ok(at >= 0 && "allPhases" in json);
      assert.equal(tableAt(lines, at + 1).rows.length, json.allPhases.length);
    }
  }
});

Deno.test("events gc-stats labels every figure with its --json key", async () => {
  for (const file of ["d8.events", "e10.events"]) {
    const { text, json } = await textAndJson(["gc-stats", file]);
    const percent = (k: string, v: unknown) =>
      /Percent$/.test(k) ? (v as number).toFixed(2) : String(v);
    assertLabelled(text, json, [
      "events",
      "lostWords",
      "complete",
      "gcTimeNs",
      "gcPercent",
      "pauseRule",
      "counterUnits",
      "incompletePauses",
    ], percent);
    assertLabelled(text, json, ["pausePhases"], (_k, v) => (v as string[]).join(","));
    assertLabelled(text, json.span, Object.keys(json.span), (_k, v) => String(v));
    assertLabelled(text, json.allocations, Object.keys(json.allocations), percent);
    assertLabelled(text, json.collections, Object.keys(json.collections));
    assertLabelled(text, json.latency, ["count", "total", "min", "max"]);
    const lines = text.split("\n");
    const { head, rows } = tableAt(lines, lines.indexOf("domains:") + 1);
    assert.equal(rows.length, json.domains.length);
    for (const [r, d] of json.domains.entries()) {
      for (const [c, key] of head.entries()) {
        assert.ok(key in d, `${key} is not a key of a domain`);
        assert.equal(rows[r][c], percent(key, d[key]), `${file} domain ${d.domain} ${key}`);
      }
    }
    const pct = tableAt(lines, lines.findIndex((l) => /^ {2}percentile +rank +value$/.test(l)));
    assert.deepEqual(
      pct.rows,
      json.latency.percentiles.map((
        p: { percentile: string; rank: number; value: number },
      ) => [p.percentile, String(p.rank), String(p.value)]),
    );
  }
});

Deno.test("ocaml status labels its lines with the --json keys", async () => {
  await withTemp(async (dir) => {
    const mine = await fakeOcamlopt(join(dir, "path", "ocamlopt"), "5.3.1");
    for (const extra of [[], ["--prefix", join(dir, "elsewhere")]]) {
      const t = ocamlCliIO(testEnv(dir, [join(dir, "path")]));
      const j = ocamlCliIO(testEnv(dir, [join(dir, "path")]));
      assert.equal(await ocaml(["status", ...extra], t), 0, t.err);
      assert.equal(await ocaml(["status", "--json", ...extra], j), 0, j.err);
      const json = JSON.parse(j.out);
      const labels = t.out.split("\n").filter((l) => /^\S/.test(l)).map((l) => l.split(":")[0]);
      assert.deepEqual(labels, Object.keys(json), extra.join(" "));
      assert.ok(t.out.includes(mine));
    }
  });
});

function diffIO(results: Record<string, DiffResult>) {
  const io = {
    out: "",
    err: "",
    stdout(text: string) {
      io.out += text;
    },
    stderr(text: string) {
      io.err += text;
    },
    isTerminal: () => false,
    env: (name: string) => ({ HOME: "/home/u" } as Record<string, string>)[name],
    readTextFile: () => undefined,
    importModule: () => Promise.reject(new Error("no modules")),
    toolchain: () =>
      Promise.resolve({ ocamlopt: ["/bin/ocamlopt"], version: "5.3.0", origin: "user" as const }),
    diff: (sc: { settings: { name: string } }) => Promise.resolve(results[sc.settings.name]),
  };
  return io satisfies DiffCliIO;
}

Deno.test("diff names its table's columns and its totals with the --json keys", async () => {
  const [a, b, c] = scenarios.map((s) => s.settings.name);
  const results: Record<string, DiffResult> = {
    [a]: resultOf(a, compareLogs(canonical(callbackLines(4)), canonical(callbackLines(4)))),
    [b]: { scenario: b, status: "not exportable", reason: "threads" },
    [c]: { scenario: c, status: "error", message: "boom" },
  };
  const args = ["--no-known", a, b, c];
  const t = diffIO(results), j = diffIO(results);
  assert.equal(await diff(args, t), 1);
  assert.equal(await diff([...args, "--json"], j), 1);
  const json = JSON.parse(j.out);
  // Totals: `N <key>` with camelCase keys as words ("notExportable" → "not exportable").
  const words = (k: string) => k.replace(/[A-Z]/g, (x) => ` ${x.toLowerCase()}`);
  // The rings' totals are printed on a line of their own, only when rings were compared.
  assert.equal(json.totals.ringsCompared, 0);
  assert.ok(!/^rings: /m.test(t.out));
  for (const [k, v] of Object.entries(json.totals)) {
    if (/^ring/.test(k)) continue;
    assert.ok(t.out.includes(`${v} ${words(k)}`), `totals: no '${v} ${words(k)}'`);
  }
  // Table: the header's names are keys of a result (callbacks) or of its collections.
  const head = t.out.split("\n").find((l) => l.startsWith("scenario "))!.trim().split(/ +/);
  const agree = json.results[0];
  for (const name of head) {
    assert.ok(name in agree || name in agree.collections.sim, `column ${name}`);
  }
  const row = t.out.split("\n").find((l) => l.startsWith(`${a} `))!.trim().split(/ +/);
  assert.deepEqual(row, [
    agree.scenario,
    agree.status,
    `${agree.callbacks.sim}/${agree.callbacks.real}`,
    `${agree.collections.sim.minor}/${agree.collections.real.minor}`,
    `${agree.collections.sim.major}/${agree.collections.real.major}`,
  ]);
});
