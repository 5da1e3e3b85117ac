// lib/scenario/golden.ts's policy, without I/O: where goldens go, which files a golden folder
// holds, whose they are, and what a run does with them.
import assert from "node:assert/strict";
import {
  foreignOwner,
  type Golden,
  GOLDEN_FILES,
  goldenFolderFiles,
  goldenFromFiles,
  goldenMode,
  goldenPlace,
  goldenVerdict,
  isGoldenFolderFile,
  MODULE_RECORD,
} from "../../lib/scenario/golden.ts";

const G: Golden = {
  ctf: new Uint8Array([1, 2]),
  traceDump: "t\n",
  eventsDump: "",
  callbackLog: "c\n",
};
const enc = (s: string) => new TextEncoder().encode(s);

Deno.test("goldenPlace: the library's by name; a module's beside it, never in tests/golden", () => {
  const base = { libraryDir: "/r/tests/golden", cwd: "/w", name: "s" };
  assert.deepEqual(goldenPlace({ ...base, library: true }), {
    place: { dir: "/r/tests/golden/s" },
  });
  assert.deepEqual(goldenPlace({ ...base, library: false, module: "m/my_sc.ts" }), {
    place: { dir: "/w/m/golden/my_sc", module: "../my_sc.ts" },
  });
  assert.deepEqual(
    goldenPlace({ ...base, library: false, module: "my_sc.ts", goldenDir: "/g" }),
    { place: { dir: "/g/my_sc", module: "../w/my_sc.ts" } },
  );
  const refused = (r: ReturnType<typeof goldenPlace>) => "refusal" in r ? r.refusal : "";
  assert.match(
    refused(goldenPlace({ ...base, library: false, module: "x.ts", goldenDir: "/r/tests/golden" })),
    /^goldens of x\.ts cannot go to \/r\/tests\/golden: tests\/golden holds the library's only/,
  );
  // Through a link: the real path decides.
  assert.match(
    refused(goldenPlace({
      ...base,
      library: false,
      module: "x.ts",
      goldenDir: "/link",
      realPath: (p) => p.replace(/^\/link/, "/r/tests/golden"),
    })),
    /cannot go to \/link \(really \/r\/tests\/golden\)/,
  );
  assert.match(
    refused(goldenPlace({ ...base, library: false, module: "bad name.ts" })),
    /^cannot keep goldens of bad name\.ts: its file name must be /,
  );
});

Deno.test("a golden folder: its files, what it may hold, read back whole or not at all", () => {
  const lib = { dir: "/g/s" }, mod = { dir: "/g/m", module: "../m.ts" };
  const names = (p: typeof mod | typeof lib) => goldenFolderFiles(p, G).map(([n]) => n);
  assert.deepEqual(names(lib), Object.values(GOLDEN_FILES));
  assert.deepEqual(names(mod), [...Object.values(GOLDEN_FILES), MODULE_RECORD]);
  assert.equal(isGoldenFolderFile(lib, MODULE_RECORD), false);
  assert.equal(isGoldenFolderFile(mod, MODULE_RECORD), true);
  assert.equal(isGoldenFolderFile(mod, "notes.txt"), false);
  const files = new Map(goldenFolderFiles(lib, G).map(([n, d]) => [n, d]));
  const read = (n: string) => {
    const d = files.get(n);
    return typeof d === "string" ? enc(d) : d;
  };
  assert.deepEqual(goldenFromFiles(read), G);
  files.delete(GOLDEN_FILES.callbackLog);
  assert.equal(goldenFromFiles(read), undefined);
});

Deno.test("foreignOwner: another module's record, a missing one, or none", () => {
  const mod = { dir: "/g/m", module: "../m.ts" };
  assert.equal(foreignOwner(mod, { exists: false, record: undefined }), undefined);
  assert.equal(foreignOwner(mod, { exists: true, record: enc("../m.ts\n") }), undefined);
  assert.equal(foreignOwner(mod, { exists: true, record: enc("../o.ts\n") }), "../o.ts");
  assert.equal(foreignOwner(mod, { exists: true, record: undefined }), "(no module recorded)");
  assert.equal(foreignOwner({ dir: "/g/s" }, { exists: true, record: undefined }), undefined);
});

Deno.test("goldenMode: update, compare, none; the combinations refused", () => {
  const m = (update: boolean, check: boolean, overridden: boolean) =>
    goldenMode({ update, check, overridden });
  assert.deepEqual(m(false, false, false), { mode: "compare" });
  assert.deepEqual(m(false, true, false), { mode: "compare" });
  assert.deepEqual(m(true, false, false), { mode: "update" });
  assert.deepEqual(m(false, false, true), { mode: "none" });
  for (const [u, c, o] of [[true, false, true], [true, true, false], [false, true, true]]) {
    assert.ok("refusal" in m(u, c, o), `${u} ${c} ${o}`);
  }
});

Deno.test("goldenVerdict: what a run does with the goldens at its place", () => {
  const place = { dir: "/g/m", module: "../m.ts" };
  const ask = (over: Partial<Parameters<typeof goldenVerdict>[0]>) =>
    goldenVerdict({
      mode: "compare",
      check: false,
      place,
      module: "m.ts",
      owner: undefined,
      got: G,
      stored: () => G,
      ...over,
    }, "CMD --update");
  assert.deepEqual(ask({ mode: "update" }), { outcome: "write" });
  const refused = ask({ mode: "update", owner: "../o.ts" });
  assert.equal(refused.outcome, "refused");
  assert.match(refused.error!, /holds the goldens of \.\.\/o\.ts, not of m\.ts: not over/);
  assert.deepEqual(ask({ mode: "none" }), { outcome: "-" });
  assert.deepEqual(ask({}), { outcome: "same" });
  const differs = ask({ stored: () => ({ ...G, callbackLog: "d\n" }) });
  assert.equal(differs.outcome, "DIFFERS");
  assert.match(differs.diff!, /^callbacks\.txt differs at line 1:/);
  assert.deepEqual(ask({ stored: () => undefined }), { outcome: "none" });
  assert.deepEqual(ask({ stored: () => undefined, check: true }), {
    outcome: "none",
    error: "has no goldens at /g/m to check (write them with CMD --update)",
  });
  // Another module's goldens are never read, and are an error only under --check.
  const foreign = ask({ owner: "../o.ts", stored: () => assert.fail("read") });
  assert.equal(foreign.outcome, "foreign");
  assert.match(foreign.note!, /not compared$/);
  assert.equal(foreign.error, undefined);
  assert.ok(ask({ owner: "../o.ts", check: true }).error !== undefined);
});
