// Goldens are keyed by the scenario's module: the library's are tests/golden/<name>/, a module
// outside the library has its own (--golden-dir, or golden/ beside it), never compared with or
// written over the library's even under the same name; --check fails on anything that differs.
import assert from "node:assert/strict";
import { run } from "../../cli/scenario.ts";
import { scenario } from "../../lib/scenario/mod.ts";
import { GOLDEN_FILES } from "../../lib/scenario/golden.ts";
import { scenarios } from "../../scenarios/index.ts";
import { stub } from "./cli_stub.ts";

const encoder = new TextEncoder();
const refLoop = scenarios.find((s) => s.settings.name === "ref_loop")!;
/** Outside the library, named like a library scenario, doing something else. */
const impostor = scenario({ name: "ref_loop" }, (s) => {
  s.main.memprof.start({ samplingRate: 1 });
  s.main.repeat(5, () => s.main.alloc(3));
  s.main.memprof.stop();
});

function libraryGolden(io: ReturnType<typeof stub>): string[] {
  return io.tree("/golden/ref_loop").map((p) => `${p} ${io.files.get(p)?.length}`);
}

Deno.test("a module outside the library named like a library scenario never touches its golden", async () => {
  // Even a byte-identical copy of a library scenario is not the library's.
  for (const sc of [impostor, { ...refLoop }]) {
    const io = stub({ modules: { "./ext/ref_loop.ts": { default: sc } } });
    const before = libraryGolden(io);
    assert.equal(await run(["./ext/ref_loop.ts", "--out", "/o"], io), 0);
    assert.match(io.out, /^ref_loop .* ok +none +\d+$/m, "not compared with tests/golden");
    assert.equal(await run(["./ext/ref_loop.ts", "--out", "/o", "--check"], io), 1);
    assert.match(
      io.err,
      /error: scenario ref_loop has no goldens at \/home\/u\/ext\/golden\/ref_loop to check/,
    );
    io.err = "";
    assert.equal(await run(["./ext/ref_loop.ts", "--out", "/o", "--update"], io), 0);
    assert.deepEqual(libraryGolden(io), before, "the library's golden is untouched");
    assert.equal(io.kind("/golden/index.ts"), undefined, "the library's index is not rewritten");
    assert.deepEqual(io.tree("/home/u/ext/golden"), [
      "/home/u/ext/golden/ref_loop/",
      "/home/u/ext/golden/ref_loop/callbacks.txt",
      "/home/u/ext/golden/ref_loop/events.txt",
      "/home/u/ext/golden/ref_loop/module.txt",
      "/home/u/ext/golden/ref_loop/trace.ctf",
      "/home/u/ext/golden/ref_loop/trace.txt",
    ]);
    assert.equal(io.text("/home/u/ext/golden/ref_loop/module.txt"), "../ref_loop.ts\n");
    // It says what it wrote and how to register the scenario.
    assert.match(
      io.err,
      /^ref_loop: wrote \/home\/u\/ext\/golden\/ref_loop\/ \(trace\.ctf, trace\.txt, events\.txt, callbacks\.txt, module\.txt\)\.$/m,
    );
    assert.match(
      io.err,
      /\.\/ext\/ref_loop\.ts is not a library scenario, so deno test does not check it/,
    );
    assert.match(io.err, /deno task scenario \.\/ext\/ref_loop\.ts --out \/o --check/);
    assert.match(
      io.err,
      /move it into scenarios\/, import it in scenarios\/index\.ts, then run\n +deno task scenario ref_loop --update/,
    );
    assert.match(
      io.err,
      /The library has a scenario named ref_loop already: rename this one first/,
    );
    const check = stub({ modules: { "./ext/ref_loop.ts": { default: sc } } });
    for (const [k, v] of io.files) check.files.set(k, v);
    for (const d of io.dirs) check.dirs.add(d);
    assert.equal(await run(["./ext/ref_loop.ts", "--out", "/o", "--check"], check), 0);
    assert.match(check.out, /^ref_loop .* ok +same +\d+$/m);
  }
  // The library scenario itself, by name or by its module, is compared with tests/golden.
  const lib = stub({ modules: { "./scenarios/ref_loop.ts": { default: refLoop } } });
  assert.equal(await run(["./scenarios/ref_loop.ts", "--out", "/o", "--check"], lib), 0);
  assert.match(lib.out, /^ref_loop .* ok +same +\d+$/m);
});

Deno.test("--golden-dir keeps goldens of outside modules per module file", async () => {
  const mods = {
    "./a/s.ts": { default: impostor },
    "/elsewhere/b/s.ts": { default: scenario({ name: "other" }, (s) => void s.main.alloc(1)) },
  };
  const io = stub({ modules: mods });
  assert.equal(
    await run(["./a/s.ts", "--golden-dir", "/g", "--update", "--out", "/o"], io),
    0,
  );
  assert.equal(io.text("/g/s/module.txt"), "../home/u/a/s.ts\n");
  // Another module with the same file name: neither compared with nor written over them.
  io.err = "";
  assert.equal(await run(["/elsewhere/b/s.ts", "--golden-dir", "/g", "--out", "/o"], io), 0);
  assert.match(io.out, /^other .* foreign +\d+$/m);
  assert.match(
    io.err,
    /other: \/g\/s holds the goldens of \.\.\/home\/u\/a\/s\.ts, not of \/elsewhere\/b\/s\.ts: not compared/,
  );
  const ctf = io.files.get(`/g/s/${GOLDEN_FILES.ctf}`);
  assert.equal(
    await run(["/elsewhere/b/s.ts", "--golden-dir", "/g", "--update", "--out", "/o"], io),
    1,
  );
  assert.match(
    io.err,
    /error: \/g\/s holds the goldens of \.\.\/home\/u\/a\/s\.ts, not of \/elsewhere\/b\/s\.ts: not overwriting them/,
  );
  assert.deepEqual(io.files.get(`/g/s/${GOLDEN_FILES.ctf}`), ctf);
  assert.equal(
    await run(["/elsewhere/b/s.ts", "--golden-dir", "/g", "--check", "--out", "/o"], io),
    1,
  );
  // The first module compares with its own.
  assert.equal(await run(["./a/s.ts", "--golden-dir", "/g", "--check", "--out", "/o"], io), 0);
});

Deno.test("goldens of outside modules never go into tests/golden", async () => {
  for (const dir of ["/golden", "/golden/sub", "/golden/../golden/x"]) {
    const io = stub({ modules: { "./x.ts": { default: impostor } } });
    assert.equal(await run(["./x.ts", "--golden-dir", dir, "--update", "--out", "/o"], io), 2, dir);
    assert.match(io.err, /tests\/golden holds the library's only \(give another --golden-dir\)/);
    assert.equal(io.kind("/o"), undefined);
  }
  // A module whose own folder holds tests/golden (a module in tests/) needs --golden-dir.
  const inTests = stub({ modules: { "/x.ts": { default: impostor } } });
  assert.equal(await run(["/x.ts", "--update", "--out", "/o"], inTests), 2);
  // --golden-dir with library scenarios only is a mistake.
  const lib = stub();
  assert.equal(await run(["ref_loop", "--golden-dir", "/g"], lib), 2);
  assert.match(lib.err, /--golden-dir is for scenario modules outside the library/);
});

Deno.test("a golden folder reached through a symbolic link into tests/golden is refused", async () => {
  const cases: [string[], Record<string, string>][] = [
    [["--golden-dir", "/mine/g"], { "/mine/g": "/golden" }],
    [["--golden-dir", "/mine/g/sub"], { "/mine/g": "/golden" }],
    [["--golden-dir", "/mine/golden"], { "/mine": "/" }],
    [["--golden-dir", "/a/b"], { "/a": "/x", "/x/b": "/golden/deep" }],
    [[], { "/home/u/golden": "/golden" }], // the module's own golden/ folder is a link
  ];
  for (const [args, links] of cases) {
    const io = stub({ modules: { "./x.ts": { default: impostor } }, links });
    const what = JSON.stringify({ args, links });
    assert.equal(await run(["./x.ts", ...args, "--update", "--out", "/o"], io), 2, what);
    assert.match(
      io.err,
      /cannot go to \S+ \(really \/golden\S*\): tests\/golden holds the library's only/,
      what,
    );
    assert.equal(io.kind("/o"), undefined, what);
    assert.deepEqual(io.tree("/golden").filter((p) => p.includes("/x/")), [], what);
  }
  // A link elsewhere is fine.
  const io = stub({ modules: { "./x.ts": { default: impostor } }, links: { "/mine/g": "/else" } });
  assert.equal(await run(["./x.ts", "--golden-dir", "/mine/g", "--update", "--out", "/o"], io), 0);
});

Deno.test("--check exits 1 when a golden differs or is missing, 0 when all agree", async () => {
  const all = stub();
  assert.equal(await run(["--check", "--out", "/o"], all), 0);
  assert.doesNotMatch(all.out, /DIFFERS| none +\d+$/m);
  const edited = stub();
  const path = `/golden/triple_cons/${GOLDEN_FILES.traceDump}`;
  const text = new TextDecoder().decode(edited.files.get(path)!).replace(/\n$/, "\nextra\n");
  edited.files.set(path, encoder.encode(text));
  assert.equal(await run(["triple_cons", "ref_loop", "--check", "--out", "/o"], edited), 1);
  assert.match(edited.out, /^triple_cons .* DIFFERS +\d+$/m);
  assert.match(edited.out, /^ref_loop .* same +\d+$/m);
  assert.match(edited.err, /^1 scenario\(s\) differ from their goldens$/m);
  const missing = stub();
  missing.removeAll("/golden/ref_loop");
  assert.equal(await run(["ref_loop", "--check", "--out", "/o"], missing), 1);
  assert.match(missing.err, /scenario ref_loop has no goldens at \/golden\/ref_loop to check/);
  // Without --check a missing golden is not a failure (a new scenario), a differing one is.
  const plain = stub();
  plain.removeAll("/golden/ref_loop");
  assert.equal(await run(["ref_loop", "--out", "/o"], plain), 0);
});

Deno.test("--update of a library scenario replaces its golden folder and regenerates the index", async () => {
  const io = stub();
  io.files.set("/golden/ref_loop/stale.txt", encoder.encode("x"));
  assert.equal(await run(["ref_loop", "--update", "--out", "/o"], io), 1);
  assert.match(io.err, /not replacing \/golden\/ref_loop: it holds stale\.txt/);
  io.removeAll("/golden/ref_loop/stale.txt");
  io.err = "";
  assert.equal(await run(["ref_loop", "--update", "--out", "/o"], io), 0);
  assert.equal(io.err, "");
  assert.deepEqual(io.tree("/golden/ref_loop"), [
    "/golden/ref_loop/callbacks.txt",
    "/golden/ref_loop/events.txt",
    "/golden/ref_loop/trace.ctf",
    "/golden/ref_loop/trace.txt",
  ]);
  assert.match(io.text("/golden/index.ts")!, /"ref_loop": \{/);
  assert.deepEqual(io.tree("/golden").filter((p) => p.split("/")[2].startsWith(".")), []);
});
