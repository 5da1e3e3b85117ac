/**
 * Why a filter selects nothing: the analysis commands print an empty table for a valid filter
 * that matches no sample (`--live-at 99` on a 0.25 s trace, `--domain 7` on a trace of domains
 * 0–5), and say why in the table and on stderr, with what the trace holds.
 * @module
 */
import { type AnalysisFilter, selectorOf, SOURCES } from "./filter.ts";
import type { ProfileData } from "./profile.ts";
import { selectionTotals, selectSamples } from "./select.ts";
import { formatSeconds } from "./top.ts";

/** What a trace holds, in the filters' terms: its samples, domains and time span. */
export function traceHoldings(data: ProfileData): string {
  const d = data.stats.domains;
  const domains = d.length === 0
    ? "no domain"
    : `domain${d.length === 1 ? "" : "s"} ${d.join(", ")}`;
  return `the trace holds ${data.stats.samples} samples, of ${domains}, from 0 to ${
    formatSeconds(data.stats.durationUs)
  }`;
}

/** The filter that cannot match anything in `data`, named as the option that set it, or
 * undefined when each could. */
function impossibleFilter(data: ProfileData, f: AnalysisFilter): string | undefined {
  const s = data.stats;
  if (f.domains !== undefined && !f.domains.some((d) => s.domains.includes(d))) {
    return `--domain ${f.domains.join(",")}: no such domain in the trace`;
  }
  if (f.sources !== undefined) {
    const counts = s.allocations;
    const names = Object.keys(SOURCES) as (keyof typeof SOURCES)[];
    if (!f.sources.some((src) => counts[src] > 0)) {
      const has = names.filter((n) => counts[n] > 0);
      return `--source ${f.sources.join(",")}: the trace has no such allocation (only ${
        has.join(", ")
      })`;
    }
  }
  if (f.fromUs !== undefined && f.fromUs > s.durationUs) {
    return `--from ${formatSeconds(f.fromUs)} is after the trace's end`;
  }
  if (typeof f.liveAt === "number" && f.liveAt > s.durationUs) {
    return `--live-at ${formatSeconds(f.liveAt)} is after the trace's end`;
  }
  if (f.liveAt === "peak" && data.peak === null) return "--live-at peak: the trace has no peak";
  return undefined;
}

/**
 * Why `filter` selects no sample of `data` (aggregated with it), or undefined when it selects
 * some: the filter that cannot match (a domain the trace does not have, a time after its end, a
 * source it has no allocation of) or, when each could, that nothing matches them together; then
 * what the trace holds ({@linkcode traceHoldings}). A filter that selects nothing is not an
 * error: the commands print their empty result and this note.
 */
export function emptySelectionNote(data: ProfileData, filter: AnalysisFilter): string | undefined {
  const samples = selectionTotals(selectSamples(data, selectorOf(filter))).samples;
  if (samples > 0) return undefined;
  if (data.stats.samples === 0) return `no sample selected: ${traceHoldings(data)}`;
  const why = impossibleFilter(data, filter) ??
    (filter.liveAt === undefined
      ? "no sampled allocation matches the filters"
      : "no sampled object matching the filters is live then");
  return `no sample selected: ${why}; ${traceHoldings(data)}`;
}
