// The real OCaml 5.3 toolchain, for the tests that compile and run OCaml programs
// (tests/differential/library_agree_test.ts, tests/runtime_events/watch_test.ts). It is found as
// `deno task diff` finds it (findToolchain: $MEMPROF_LAB_OCAML_PREFIX, the default cache that
// `deno task ocaml setup` builds, ocamlopt on PATH if OCaml 5.3.x), else at the checkout's own
// .ci/.tools/ocaml-5.3.0, where CI (.ci/run) builds it. Without one, those tests are ignored and
// say so in one line, with the command that enables them. In the quick tier (tests/tier.ts,
// `deno task test`) no toolchain is looked for: those tests are ignored, and the runner says so
// once at its end.
import {
  findToolchain,
  OCAML_VERSION,
  PREFIX_ENV_VAR,
  resolvePrefix,
  type Toolchain,
} from "../lib/ocaml/mod.ts";
import { defaultDiffCacheDir, DIFF_CACHE_ENV_VAR } from "../lib/differential/cache.ts";
import { TIER } from "./tier.ts";

/** The checkout's own toolchain prefix, where CI (.ci/run) builds OCaml. */
export const CHECKOUT_PREFIX: string =
  new URL(`../.ci/.tools/ocaml-${OCAML_VERSION}`, import.meta.url).pathname;

/** The toolchain found, or why there is none. */
export type RealOCaml =
  | { readonly toolchain: Toolchain; readonly why?: undefined }
  | { readonly toolchain: undefined; readonly why: string };

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Why the quick tier runs no real program (tests/tier.ts). */
export const QUICK_TIER_WHY =
  "the quick tier does not run the real OCaml runtime (deno task test:full runs it)";

async function discover(): Promise<RealOCaml> {
  if (TIER === "quick") return { toolchain: undefined, why: QUICK_TIER_WHY };
  const missing = (["env", "run", "read"] as const).filter((name) =>
    Deno.permissions.querySync({ name }).state !== "granted"
  );
  if (missing.length > 0) {
    return {
      toolchain: undefined,
      why: `looking for an OCaml 5.3 toolchain needs --allow-${
        missing.join(", --allow-")
      } (run the tests with \`deno task test\`)`,
    };
  }
  try {
    const found = await findToolchain() ??
      (exists(`${CHECKOUT_PREFIX}/bin/ocamlopt`)
        ? await findToolchain({ prefix: CHECKOUT_PREFIX })
        : undefined);
    if (found !== undefined) return { toolchain: found };
  } catch (e) {
    return { toolchain: undefined, why: `looking for OCaml 5.3 failed: ${(e as Error).message}` };
  }
  // Where `deno task ocaml setup` builds (resolvePrefix, as setupToolchain): findToolchain looks
  // there first.
  let target: string;
  try {
    target = resolvePrefix().prefix;
  } catch (e) {
    return { toolchain: undefined, why: `no OCaml 5.3 toolchain: ${(e as Error).message}` };
  }
  const env = Deno.env.get(PREFIX_ENV_VAR);
  return {
    toolchain: undefined,
    why:
      `no OCaml 5.3 toolchain (looked at ${
        env ? `$${PREFIX_ENV_VAR} (${env}), ` : ""
      }the default cache, ${CHECKOUT_PREFIX} and ocamlopt on PATH); run \`deno task ocaml ` +
      `setup\` (about 3 minutes) to build OCaml ${OCAML_VERSION} into ${target}, where these ` +
      `tests find it`,
  };
}

/** The real OCaml toolchain, found once when this module loads. */
export const REAL_OCAML: RealOCaml = await discover();

/** Prints the one line saying that `what` is skipped, and why; nothing in the quick tier, whose
 * runner says once, at its end, that the real runtime's tests were not run. */
export function skipNotice(what: string, why: string): void {
  if (why === QUICK_TIER_WHY) return;
  console.log(`SKIPPED: ${what} — ${why}`);
}

/** The folder `deno task diff` keeps compiled programs in (its default), when a toolchain was
 * found and one can be named. */
export const DIFF_CACHE: string | undefined = REAL_OCAML.toolchain === undefined
  ? undefined
  : defaultDiffCacheDir((name) => Deno.env.get(name));

/** Why the tests that build and run real programs are skipped, or undefined when they run: no
 * toolchain, or no folder for the compiled programs. */
export const DIFF_SKIP: string | undefined = REAL_OCAML.toolchain === undefined
  ? REAL_OCAML.why
  : DIFF_CACHE === undefined
  ? `no folder for compiled programs: set ${DIFF_CACHE_ENV_VAR}, XDG_CACHE_HOME or HOME`
  : undefined;
