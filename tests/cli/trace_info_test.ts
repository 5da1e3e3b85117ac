// `trace info` prints the same fields as text and as --json: the JSON keys are the text's labels,
// in the same order, with the same values.
import assert from "node:assert/strict";
import { join } from "node:path";
import { root, runCli } from "./helpers.ts";

async function traceInfo(args: string[]): Promise<string> {
  const r = await runCli("trace.ts", ["info", ...args], { permissions: ["--allow-read"] });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

/** The text's fields: memtrace's `name: value` lines, then `label value` rows. */
function textFields(text: string): [string, string][] {
  return text.trimEnd().split("\n").map((line) => {
    const m = /^([a-z_0-9]+):? +(.*)$/.exec(line);
    assert.ok(m !== null, `unlabelled line: ${line}`);
    return [m[1], m[2]];
  });
}

for (const fixture of ["single_1e-4.ctf", "multi_mdtrace_3e-4.renumbered.ctf"]) {
  Deno.test(`trace info names its fields alike in text and --json (${fixture})`, async () => {
    const file = join(root, "tests/fixtures/memtrace", fixture);
    const text = textFields(await traceInfo([file]));
    const json = JSON.parse(await traceInfo(["--json", file])) as Record<string, unknown>;
    assert.deepEqual(Object.keys(json), text.map(([k]) => k));
    for (const [key, value] of text) {
      const v = json[key];
      if (typeof v === "number") {
        // sample_rate's text adds the hexadecimal float in parentheses.
        assert.equal(Number(value.split(" ")[0]), v, key);
      } else if (Array.isArray(v)) assert.equal(v.join(",") || "-", value, key);
      else if (v === null) assert.equal(value, "None", key);
      else if (key === "context") assert.equal(value, `Some ${JSON.stringify(v)}`, key);
      else assert.equal(value, JSON.stringify(v), key);
    }
    // The counts add up as their names say.
    const n = (k: string) => json[k] as number;
    assert.equal(
      n("allocations"),
      n("allocations_minor") + n("allocations_major") + n("allocations_external"),
    );
    assert.equal(
      n("allocations"),
      n("size_le4_words") + n("size_le16_words") + n("size_le256_words") +
        n("size_gt256_words"),
    );
  });
}
