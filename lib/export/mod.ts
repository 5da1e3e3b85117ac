/**
 * Export of scenarios to standalone OCaml programs for the real OCaml 5.3 runtime (the
 * differential runner's other side). See docs/differential.md.
 *
 * @example Export a scenario and look at its program
 * ```ts
 * import { exportOCaml } from "./mod.ts";
 * import { scenario } from "../scenario/mod.ts";
 * import { assert } from "node:console";
 *
 * const sc = scenario({ name: "tiny" }, (s) => {
 *   s.main.memprof.start({ samplingRate: 0.5, callstackSize: 0 });
 *   s.main.repeat(10, () => s.main.alloc(3));
 *   s.main.memprof.stop();
 * });
 * const program = exportOCaml(sc);
 * assert(program.fileName === "tiny.ml");
 * assert(program.source.includes("for i1 = 1 to 10 do"));
 * ```
 * @module
 */
export {
  DEFAULT_BUILD_COMMAND,
  DEFAULT_CALLBACK_KEEP_CAPACITY,
  DEFAULT_LOG_CAPACITY,
  defName,
  type ExportedProgram,
  exportOCaml,
  type ExportOptions,
  HARNESS_FRAMES,
  moduleNameOf,
} from "./ocaml.ts";
export { ExportError } from "./errors.ts";
export {
  checkExportable,
  type ExportableOptions,
  type ExportRefusal,
  MAX_PROGRAM_CHARS,
  type RefusalKind,
} from "./exportable.ts";
