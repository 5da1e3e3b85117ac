// The harness heap model (lib/export/_harness_heap.ts, from the tables of
// lib/export/_harness_tables.ts) against the real program: each exported program, built with the
// real OCaml 5.3 toolchain and stopped where its scenario starts (after the harness's
// `Gc.full_major ()`, `Gc.quick_stat ()` and `Gc.minor ()`), prints its major heap's size
// (`Gc.quick_stat`'s `heap_words`: its pools, 4,096 words each, and its large blocks), which must
// be the model's exactly. A table the model misses or sizes wrongly shows here when it is a large
// block (over 128 words) or changes how many pools a size class takes; smaller drifts are
// tests/export/harness_tables_test.ts's, which reads the written prelude back. Needs the real
// toolchain (tests/real_toolchain.ts); skipped with its hint otherwise.
import assert from "node:assert/strict";
import { exportOCaml } from "../../lib/export/mod.ts";
import { MajorHeap } from "../../lib/runtime/_major_heap.ts";
import { scenarios } from "../../scenarios/index.ts";
import { REAL_OCAML, skipNotice } from "../real_toolchain.ts";

const skip = REAL_OCAML.toolchain === undefined ? REAL_OCAML.why : undefined;
if (skip !== undefined) skipNotice("the harness heap model against the real program's", skip);

/** Library scenarios of every kind of harness: plain, a large keep site with a small minor heap,
 * a 100,000-slot site and Bigarray dimensions, marshalled values dropped at initialisation,
 * several domains, user events (runtime_events.cmxa), the systhreads' baton, the emulation of
 * memtrace's External (Random.State.make's state, a Bigarray). */
const NAMES = [
  "ref_loop",
  "growing_set",
  "bigarray_custom",
  "unmarshal_shapes",
  "spawned_profile_only",
  "service",
  "threads_in_callbacks",
  "blocking_in_callback",
  "tracer_reentrancy",
];

/** The line the probe prints. */
const PROBE = 'Printf.printf "heap_words %d\\n" (Gc.quick_stat ()).Gc.heap_words; exit 0;';

async function realHeapWords(
  source: string,
  fileName: string,
  args: readonly string[],
  env: Record<string, string>,
): Promise<number> {
  const dir = Deno.makeTempDirSync({ prefix: "memprof-lab-" });
  try {
    // The probe where the scenario would start: run_main is the scenario.
    const probed = source.replace("  run_main ();\n", `  ${PROBE}\n  run_main ();\n`);
    assert.notEqual(probed, source, "the program's main calls run_main");
    Deno.writeTextFileSync(`${dir}/${fileName}`, probed);
    const [cmd, ...lead] = REAL_OCAML.toolchain!.ocamlopt;
    const built = await new Deno.Command(cmd, {
      args: [...lead, ...args, "-o", "program"],
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert(built.success, new TextDecoder().decode(built.stderr));
    const run = await new Deno.Command(`${dir}/program`, {
      cwd: dir,
      env,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(run.stdout);
    const m = /^heap_words (\d+)$/m.exec(out);
    assert(run.success && m !== null, `the probe printed ${JSON.stringify(out)}`);
    return Number(m[1]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

for (const name of NAMES) {
  Deno.test({
    name:
      `harness heap of ${name}: the model's heap words are the real program's at the scenario's start`,
    ignore: skip !== undefined,
    fn: async () => {
      const sc = scenarios.find((s) => s.settings.name === name)!;
      const program = exportOCaml(sc);
      const model = new MajorHeap(program.majorHeap.pools, program.majorHeap.large).heapWords;
      const real = await realHeapWords(
        program.source,
        program.fileName,
        program.compileArgs,
        { ...program.env },
      );
      assert.equal(model, real);
    },
  });
}
