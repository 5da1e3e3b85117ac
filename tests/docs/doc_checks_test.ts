// The documentation checks cover what they say they cover: `deno task doc-test` runs the
// examples of every entry point and of every library file that has one, and both
// `deno task check` and CI type-check the ts blocks of README.md and docs/*.md.
import assert from "node:assert/strict";
import { join, relative } from "node:path";

const ROOT = new URL("../../", import.meta.url).pathname;
const config = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json")));

/** The library's files (and mod.ts) whose documentation has an `@example`. */
function filesWithExamples(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(dir)) {
      const path = join(dir, e.name);
      if (e.isDirectory) walk(path);
      else if (/\.(ts|js)$/.test(e.name) && Deno.readTextFileSync(path).includes("@example")) {
        found.push(relative(ROOT, path));
      }
    }
  };
  walk(join(ROOT, "lib"));
  if (Deno.readTextFileSync(join(ROOT, "mod.ts")).includes("@example")) found.push("mod.ts");
  return found.sort();
}

Deno.test("deno task doc-test runs every entry point and every library file with an @example", () => {
  const args = (config.tasks["doc-test"] as string).split(/\s+/);
  assert.deepEqual(args.slice(0, 4), ["deno", "test", "--doc", "--allow-read"]);
  const files = new Set(args.slice(4));
  for (const entry of Object.values(config.exports) as string[]) {
    assert.ok(files.has(entry.replace(/^\.\//, "")), `entry point ${entry}`);
  }
  for (const f of filesWithExamples()) assert.ok(files.has(f), `${f} has an @example`);
  for (const f of ["lib/export/mod.ts", "lib/differential/mod.ts"]) assert.ok(files.has(f), f);
});

Deno.test("deno task check and CI type-check the ts blocks of README.md and docs/*.md", () => {
  const command = "deno check --doc-only README.md docs/*.md";
  assert.ok((config.tasks.check as string).includes(command), "deno task check");
  const ci = Deno.readTextFileSync(join(ROOT, ".ci/run"));
  assert.match(ci, /^deno check --doc-only README\.md docs\/\*\.md$/m);
  assert.match(ci, /^deno task doc-test$/m);
  // The convention for blocks that are not meant to be checked is the one README states.
  const readme = Deno.readTextFileSync(join(ROOT, "README.md"));
  assert.ok(readme.includes("```ts ignore"), "README documents ```ts ignore");
});
