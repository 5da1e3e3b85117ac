/**
 * The callback log of a run, in the engine's own format or in one of the fixture formats
 * (tests/fixtures/memprof_exact and memprof_lifecycle), whose header lines it rebuilds from
 * the run's counts.
 * @module
 */
import type { LogFormat } from "./spec.ts";
import { formatG } from "../util/ocaml_printf.ts";

/** Counts the fixture formats' header lines report. */
export interface LogHeaderFacts {
  samplingRate: number;
  /** Iterations of the longest loop. */
  iterations: number;
  /** Id of the domain that ran that loop (memprof_exact). */
  loopDomain: number;
  /** Minor collections during that loop (memprof_exact). */
  minorsDuringLoop: number;
  /** Minor collections since the first profile started (memprof_lifecycle). */
  minorsDuringProfile: number;
}

/** Collects log lines; each call site gives what each format wants. */
export class CallbackLog {
  readonly #lines: string[] = [];
  readonly #format: LogFormat;

  /** A log in format `format`. */
  constructor(format: LogFormat) {
    this.#format = format;
  }

  /** A line of the engine's own format (ignored by the fixture formats). */
  line(text: string): void {
    if (this.#format.format === "default") this.#lines.push(text);
  }

  /** A callback in the fixture formats: `exact` for allocation callbacks in memprof_exact's
   * format (undefined for the others), `lifecycle` in memprof_lifecycle's. */
  fixture(exact: string | undefined, lifecycle: string): void {
    const f = this.#format.format;
    if (f === "memprof_exact" && exact !== undefined) this.#lines.push(exact);
    else if (f === "memprof_lifecycle") this.#lines.push(lifecycle);
  }

  /** The log's text, with the fixture format's header line when it has one. */
  text(facts: LogHeaderFacts): string {
    const parts: string[] = [];
    this.writeText(facts, (chunk) => parts.push(chunk));
    return parts.join("");
  }

  /** {@linkcode text} handed to `write` in chunks of about 64 Ki characters, so that a long
   * log is never one string. */
  writeText(facts: LogHeaderFacts, write: (chunk: string) => void): void {
    const header = this.#header(facts);
    const lines = this.#lines;
    let parts: string[] = header === undefined ? [] : [header, "\n"];
    let size = parts.length === 0 ? 0 : header!.length + 1;
    for (let k = 0; k < lines.length; k++) {
      parts.push(lines[k], "\n");
      size += lines[k].length + 1;
      if (size >= 1 << 16) {
        write(parts.join(""));
        parts = [];
        size = 0;
      }
    }
    if (parts.length > 0) write(parts.join(""));
  }

  /** The fixture format's header line, if it has one. */
  #header(facts: LogHeaderFacts): string | undefined {
    const f = this.#format;
    const n = this.#lines.length;
    if (f.format === "memprof_exact") {
      return `# program=${f.program} sampling_rate=${formatG(facts.samplingRate, 6)} ` +
        `iterations=${facts.iterations} domain=${facts.loopDomain} ` +
        `minor_collections_during_loop=${facts.minorsDuringLoop} samples_recorded=${n}`;
    }
    if (f.format === "memprof_lifecycle") {
      return `# program=${f.program} sampling_rate=${formatG(facts.samplingRate, 6)} ` +
        `iterations=${facts.iterations} keep=${f.keep} ` +
        `minor_collections=${facts.minorsDuringProfile} callbacks=${n}`;
    }
    return undefined;
  }
}
