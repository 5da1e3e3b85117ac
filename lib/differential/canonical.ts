/**
 * The canonical callback log both sides of a differential run are reduced to: one line per
 * callback, in the order callbacks started, with everything the simulation and the real runtime
 * must agree on, then the collection counts.
 *
 * ```
 * alloc_minor d0 i=3.17 size=8 n=1 src=normal id=4 stack=[Service.parse <harness>] -> some
 * promote d0 i=- id=4 -> some
 * dealloc_major d0 i=- id=4
 * escaped d0 i=2 exn=Exit
 * ```
 *
 * `d` is the domain index (`Domain.self_index`), `i` the indices of the loops enclosing the
 * step on that domain (outermost first, `-` outside loops), `id` the number of the allocation
 * callback that started tracking the block, `stack` the callstack memprof recorded, innermost
 * first, as frame definition names (`<harness>` for the program's own frames).
 * @module
 */
import type { RunEvent } from "../scenario/mod.ts";
import { defName, type ExportedProgram } from "../export/mod.ts";
import { KIND_NAMES, OUTCOME_RAISE_BASE } from "../export/_prelude.ts";

/** The canonical log of one side. */
export interface CanonicalLog {
  /** One line per callback or exception, in order. */
  readonly lines: readonly string[];
  /** Minor collections during the run. */
  readonly minorCollections: number;
  /** Major cycles completed during the run. */
  readonly majorCycles: number;
  /** Words of each domain's minor heap. */
  readonly minorHeapWords: number;
  /** The real program's log filled up (records after that are missing). */
  readonly overflow: boolean;
}

/** The placeholder the canonical log uses for frames of the program's harness. */
export const HARNESS = "<harness>";

const SIM_KIND: Record<RunEvent["kind"], string> = {
  allocMinor: "alloc_minor",
  allocMajor: "alloc_major",
  promote: "promote",
  deallocMinor: "dealloc_minor",
  deallocMajor: "dealloc_major",
  escaped: "escaped",
  caught: "caught",
  tracerFailed: "tracer_failed",
};

function loopsText(loops: readonly number[]): string {
  return loops.length === 0 ? "-" : loops.join(".");
}

function outcomeText(o: "some" | "none" | "unit" | { readonly raise: string }): string {
  return typeof o === "string" ? o : `raise ${o.raise}`;
}

/** The canonical line of a simulation event. */
export function canonicalLine(ev: RunEvent): string {
  const head = `${SIM_KIND[ev.kind]} d${ev.domain} i=${loopsText(ev.loops)}`;
  switch (ev.kind) {
    case "allocMinor":
    case "allocMajor":
      return `${head} size=${ev.size} n=${ev.nSamples} src=${ev.source} id=${ev.id} stack=[${
        ev.callstack.map(defName).join(" ")
      }] -> ${outcomeText(ev.outcome)}`;
    case "promote":
      return `${head} id=${ev.id} -> ${outcomeText(ev.outcome)}`;
    case "deallocMinor":
    case "deallocMajor":
      return ev.outcome === "unit"
        ? `${head} id=${ev.id}`
        : `${head} id=${ev.id} -> ${outcomeText(ev.outcome)}`;
    case "escaped":
    case "caught":
    case "tracerFailed":
      return `${head} exn=${ev.exn}`;
  }
}

/** A malformed log from the real program. */
export class RealLogError extends Error {
  /** Error class name. */
  override name = "RealLogError";
}

const SOURCES = ["normal", "marshal", "custom"];

/**
 * Reads the log an exported program printed (see lib/export/_prelude.ts for its format) into
 * the canonical form, naming frames through `program.frames` and exceptions through
 * `program.exceptions`.
 */
export function parseRealLog(text: string, program: ExportedProgram): CanonicalLog {
  const rows = text.split("\n");
  if (rows[0] !== "memprof-lab differential log 1") {
    throw new RealLogError(
      `the program's output does not start with its log header: ${JSON.stringify(rows[0])}`,
    );
  }
  const field = (r: number, key: string, form: RegExp): string => {
    const row = rows[r];
    if (row === undefined || !row.startsWith(`${key} `) || !form.test(row.slice(key.length + 1))) {
      throw new RealLogError(
        `line ${r + 1} of the program's log: expected "${key} ${
          form === BOOL ? "true|false" : "N"
        }", got ${JSON.stringify(row ?? "(end of output)")}`,
      );
    }
    return row.slice(key.length + 1);
  };
  const minorHeapWords = Number(field(1, "minor_heap_words", NAT));
  const lines: string[] = [];
  let r = 2;
  for (; r < rows.length && /^[0-9]/.test(rows[r]); r++) {
    lines.push(realLine(rows[r], program, r + 1));
  }
  const minorCollections = Number(field(r, "minor_collections", INT));
  const majorCycles = Number(field(r + 1, "major_cycles", INT));
  const overflow = field(r + 2, "log_overflow", BOOL) === "true";
  return { lines, minorCollections, majorCycles, minorHeapWords, overflow };
}

const NAT = /^[0-9]+$/;
const INT = /^-?[0-9]+$/;
const BOOL = /^(true|false)$/;

function realLine(row: string, program: ExportedProgram, lineNo: number): string {
  const bad = (what: string): never => {
    throw new RealLogError(`line ${lineNo} of the program's log: ${what}: ${row}`);
  };
  const bar = row.indexOf(" | ");
  const words = (bar < 0 ? row : row.slice(0, bar)).split(" ");
  if (words.length < 8 || words.some((w) => !NAT.test(w))) bad("malformed record");
  const nums = words.map(Number);
  const [kind, domain, id, size, nSamples, source, outcome, depth] = nums;
  const loops = nums.slice(8);
  const name = KIND_NAMES[kind];
  if (name === undefined) bad(`unknown record kind ${kind}`);
  if (loops.length !== depth) bad(`${loops.length} loop indices for depth ${depth}`);
  if (kind <= 1 && SOURCES[source] === undefined) bad(`unknown allocation source ${source}`);
  if (kind <= 1 && bar < 0) bad("an allocation record without its callstack");
  if (kind >= 5 && program.exceptions[size] === undefined) bad(`unknown exception ${size}`);
  if (
    kind <= 4 && !(outcome <= 2 || program.exceptions[outcome - OUTCOME_RAISE_BASE] !== undefined)
  ) bad(`unknown outcome ${outcome}`);
  const head = `${name} d${domain} i=${loopsText(loops)}`;
  const out = outcome >= OUTCOME_RAISE_BASE
    ? `raise ${program.exceptions[outcome - OUTCOME_RAISE_BASE]}`
    : ["none", "some", "unit"][outcome];
  if (kind <= 1) {
    const [count, ...names] = row.slice(bar + 3).split(" ");
    if (!NAT.test(count) || Number(count) !== names.length) bad("callstack length mismatch");
    const stack = names.map((n) => program.frames.get(n) ?? HARNESS);
    return `${head} size=${size} n=${nSamples} src=${SOURCES[source]} id=${id} stack=[${
      stack.join(" ")
    }] -> ${out}`;
  }
  if (kind === 2) return `${head} id=${id} -> ${out}`;
  if (kind <= 4) return out === "unit" ? `${head} id=${id}` : `${head} id=${id} -> ${out}`;
  return `${head} exn=${program.exceptions[size]}`;
}
