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
  private readonly lines: string[] = [];

  constructor(private readonly format: LogFormat) {}

  /** A line of the engine's own format (ignored by the fixture formats). */
  line(text: string): void {
    if (this.format.format === "default") this.lines.push(text);
  }

  /** A callback in the fixture formats: `exact` for allocation callbacks in memprof_exact's
   * format (undefined for the others), `lifecycle` in memprof_lifecycle's. */
  fixture(exact: string | undefined, lifecycle: string): void {
    const f = this.format.format;
    if (f === "memprof_exact" && exact !== undefined) this.lines.push(exact);
    else if (f === "memprof_lifecycle") this.lines.push(lifecycle);
  }

  /** The log's text, with the fixture format's header line when it has one. */
  text(facts: LogHeaderFacts): string {
    const f = this.format;
    const n = this.lines.length;
    let header: string | undefined;
    if (f.format === "memprof_exact") {
      header = `# program=${f.program} sampling_rate=${formatG(facts.samplingRate, 6)} ` +
        `iterations=${facts.iterations} domain=${facts.loopDomain} ` +
        `minor_collections_during_loop=${facts.minorsDuringLoop} samples_recorded=${n}`;
    } else if (f.format === "memprof_lifecycle") {
      header = `# program=${f.program} sampling_rate=${formatG(facts.samplingRate, 6)} ` +
        `iterations=${facts.iterations} keep=${f.keep} ` +
        `minor_collections=${facts.minorsDuringProfile} callbacks=${n}`;
    }
    const all = header === undefined ? this.lines : [header, ...this.lines];
    return all.length === 0 ? "" : all.join("\n") + "\n";
  }
}
