/**
 * `trace diff`: how the estimated allocated and live bytes of each site, function or stack
 * changed between two traces (two runs of one program), largest change first. Rows are matched
 * by their text (locations as memtrace prints them), so traces of different runs, rates or
 * location codes compare.
 * @module
 */
import {
  bytesPerSample,
  groupBy,
  locationText,
  NO_LOCATION,
  pathOrder,
  selectionTotals,
  selectSamples,
  stackLabel,
} from "./select.ts";
import type { GroupBy, GroupRow, ProfileData, Selector } from "./profile.ts";
import { alignColumns, formatBytes, formatSeconds, intervalNote } from "./top.ts";
import { checkConfidence, DEFAULT_CONFIDENCE, hasIntervals, wordsInterval } from "./intervals.ts";
import { benjaminiHochberg, rateTestPValue } from "./_significance.ts";
import { KeyIndex } from "./_index.ts";
import { printable } from "../util/printable.ts";
import { TraceAnalysisError } from "./errors.ts";

/** Options of {@linkcode diffOf}. */
export interface DiffOptions {
  /** What rows stand for (default `site`; for functions, stacks containing the function). */
  by?: GroupBy;
  /** Most rows returned (default 20; 0 for all). */
  limit?: number;
  /** Order by the absolute change of allocated bytes (default) or of live bytes. */
  sort?: "alloc" | "live";
  /** Confidence of the intervals of the changes, in (0, 1) (default 0.95); changes are
   * significant at a false discovery rate of 1 − confidence. */
  confidence?: number;
  /** Rows returned: every changed row (default), or only those whose change is significant. */
  show?: "all" | "significant";
  /** Compare totals (default), or bytes per second of each trace's duration. */
  per?: "total" | "second";
}

/** Estimated bytes of one row or of the totals in both traces. */
export interface DiffRow {
  /** The site, function or stack (a stack's text within `STACK_TEXT_CHARS`). */
  key: string;
  /** Allocated bytes in A. */
  allocBytesA: number;
  /** Allocated bytes in B. */
  allocBytesB: number;
  /** B − A. */
  allocDelta: number;
  /** Live bytes in A. */
  liveBytesA: number;
  /** Live bytes in B. */
  liveBytesB: number;
  /** B − A. */
  liveDelta: number;
  /** Allocation samples in A. */
  samplesA: number;
  /** Allocation samples in B. */
  samplesB: number;
  /** Samples of live objects in A. */
  liveSamplesA?: number;
  /** Samples of live objects in B. */
  liveSamplesB?: number;
  /** Lower bound of `allocDelta` at the result's confidence (null when a rate allows none). */
  allocDeltaLow?: number | null;
  /** Upper bound of `allocDelta`. */
  allocDeltaHigh?: number | null;
  /** Lower bound of `liveDelta`. */
  liveDeltaLow?: number | null;
  /** Upper bound of `liveDelta`. */
  liveDeltaHigh?: number | null;
  /** Two-sided p-value of the exact conditional test that allocations did not change. */
  allocPValue?: number | null;
  /** Two-sided p-value of the test that live bytes did not change. */
  livePValue?: number | null;
  /** Benjamini–Hochberg q-value of `allocPValue` (over every test of every row). */
  allocQValue?: number | null;
  /** Benjamini–Hochberg q-value of `livePValue`. */
  liveQValue?: number | null;
  /** Whether a q-value is at most 1 − confidence: a change sampling does not explain. */
  significant?: boolean;
}

/** What {@linkcode diffOf} returns (and `trace diff --json` prints). */
export interface DiffResult {
  /** Trace A. */
  a: { executableName: string; sampleRate: number; events: number; durationUs: number };
  /** Trace B. */
  b: { executableName: string; sampleRate: number; events: number; durationUs: number };
  /** What rows stand for. */
  by: GroupBy;
  /** What "live" means: objects live at the trace end, at the peak, or at a time. */
  live: { kind: "end" | "peak" | "time"; timeUsA: number | null; timeUsB: number | null };
  /** The order of rows. */
  sort: "alloc" | "live";
  /** Sums over the whole selections. */
  totals: DiffRow;
  /** Rows whose allocated or live bytes differ, before the limit. */
  rowCount: number;
  /** Of those, rows with a significant change. */
  significantCount?: number;
  /** Which rows `rows` lists: every changed one, or the significant ones. */
  show?: "all" | "significant";
  /** Bytes are totals, or per second of each trace's duration. */
  per?: "total" | "second";
  /** Confidence of the intervals; changes are significant at false discovery rate 1 − it. */
  confidence?: number;
  /** How intervals and tests are computed. */
  method?: string;
  /** The rows, largest change first. */
  rows: DiffRow[];
}

function liveOf(sel: Selector): Selector {
  return { ...sel, live: sel.live === "alloc" ? "end" : sel.live };
}

/**
 * The stacks of two profiles in one tree of frame texts, so that stacks of A and B match by
 * their whole texts without building them: per location-path node of each profile, its node in
 * the shared tree (−1 stays −1, the stack with no known location); the tree's parents and
 * texts; and for each shared node, a profile and node that has it (to make its text).
 */
class SharedStacks {
  readonly parent: number[] = [];
  readonly text: number[] = [];
  readonly texts: string[] = [];
  readonly where: [ProfileData, number][] = [];
  readonly #textIds = new Map<string, number>();
  readonly #child = new KeyIndex();
  readonly #of = new Map<ProfileData, Float64Array>();

  /** The shared node of each location-path node of `data`. */
  of(data: ProfileData): Float64Array {
    let m = this.#of.get(data);
    if (m !== undefined) return m;
    const { parent, loc } = data.nodes;
    const locIds = new Float64Array(data.locations.fn.length).fill(-1);
    m = new Float64Array(parent.length);
    for (let i = 0; i < parent.length; i++) {
      let t = locIds[loc[i]];
      if (t < 0) {
        const s = locationText(data, loc[i]);
        t = this.#textIds.get(s) ?? -1;
        if (t < 0) {
          t = this.texts.push(s) - 1;
          this.#textIds.set(s, t);
        }
        locIds[loc[i]] = t;
      }
      const up = parent[i] < 0 ? -1 : m[parent[i]];
      let c = this.#child.get(up, t, 0);
      if (c < 0) {
        c = this.parent.push(up) - 1;
        this.text.push(t);
        this.where.push([data, i]);
        this.#child.add(up, t, 0, c);
      }
      m[i] = c;
    }
    this.#of.set(data, m);
    return m;
  }
}

function side(data: ProfileData, selector: Selector, by: GroupBy, shared: SharedStacks | null) {
  const alloc = selectSamples(data, { ...selector, live: "alloc" });
  const live = selectSamples(data, liveOf(selector));
  // Rows by key: a site's or function's text, a stack's node in the shared tree.
  const rows = new Map<string | number, { alloc: number; live: number }>();
  const canon = shared?.of(data);
  const add = (groups: GroupRow[], field: "alloc" | "live") => {
    for (const g of groups) {
      const id = canon === undefined ? g.key : g.node! < 0 ? -1 : canon[g.node!];
      let r = rows.get(id);
      if (r === undefined) rows.set(id, r = { alloc: 0, live: 0 });
      r[field] += g.samples;
    }
  };
  add(groupBy(data, alloc, by), "alloc");
  add(groupBy(data, live, by), "live");
  return {
    rows,
    bps: bytesPerSample(data),
    totals: { alloc: selectionTotals(alloc).samples, live: selectionTotals(live).samples },
  };
}

function liveTime(data: ProfileData, sel: Selector): number | null {
  if (sel.live === "peak") return data.peak?.timeUs ?? null;
  if (sel.live === "exact") return data.liveAt?.timeUs ?? null;
  return data.stats.durationUs;
}

/** Compares two profiles under the same filter (`selectorB` defaults to `selectorA`). */
export function diffOf(
  a: ProfileData,
  b: ProfileData,
  selectorA: Selector,
  selectorB: Selector = selectorA,
  options: DiffOptions = {},
): DiffResult {
  const by = options.by ?? "site";
  const sort = options.sort ?? "alloc";
  const limit = options.limit ?? 20;
  const shared = by === "stack" ? new SharedStacks() : null;
  const sa = side(a, selectorA, by, shared), sb = side(b, selectorB, by, shared);
  const confidence = checkConfidence(options.confidence ?? DEFAULT_CONFIDENCE);
  const per = options.per ?? "total";
  const show = options.show ?? "all";
  // Per second: bytes ÷ duration; the test compares words per µs of each trace.
  const unitA = per === "second" ? a.stats.durationUs / 1e6 : 1;
  const unitB = per === "second" ? b.stats.durationUs / 1e6 : 1;
  if (!(unitA > 0 && unitB > 0)) {
    throw new TraceAnalysisError(
      "per-second",
      `trace ${unitA > 0 ? "B" : "A"} lasts 0 s: it has no bytes per second`,
    );
  }
  const tested = hasIntervals(a) && hasIntervals(b);
  // The change's interval: each side's exact interval at confidence √c, so that both cover
  // (independent traces) with probability c.
  const sideConfidence = Math.sqrt(confidence);
  const wbA = a.info.wordSize / 8, wbB = b.info.wordSize / 8;
  const deltaInterval = (sA: number, sB: number): [number | null, number | null] => {
    if (!tested) return [null, null];
    const [loA, hiA] = wordsInterval(sA, a.info.sampleRate, sideConfidence);
    const [loB, hiB] = wordsInterval(sB, b.info.sampleRate, sideConfidence);
    const lo = (loB * wbB) / unitB - (hiA * wbA) / unitA;
    const hi = (hiB * wbB) / unitB - (loA * wbA) / unitA;
    return Number.isFinite(lo) && Number.isFinite(hi) ? [lo, hi] : [null, null];
  };
  const pValue = (sA: number, sB: number): number | null => {
    if (!tested) return null;
    const p = rateTestPValue(sA, sB, a.info.sampleRate, b.info.sampleRate, unitA, unitB);
    return Number.isNaN(p) ? null : p;
  };
  const withIntervals = (r: DiffRow): DiffRow => {
    [r.allocDeltaLow, r.allocDeltaHigh] = deltaInterval(r.samplesA, r.samplesB);
    [r.liveDeltaLow, r.liveDeltaHigh] = deltaInterval(r.liveSamplesA ?? 0, r.liveSamplesB ?? 0);
    return r;
  };
  const row = (
    key: string,
    x: { alloc: number; live: number } | undefined,
    y: { alloc: number; live: number } | undefined,
  ): DiffRow => {
    const allocBytesA = ((x?.alloc ?? 0) * sa.bps) / unitA;
    const allocBytesB = ((y?.alloc ?? 0) * sb.bps) / unitB;
    const liveBytesA = ((x?.live ?? 0) * sa.bps) / unitA;
    const liveBytesB = ((y?.live ?? 0) * sb.bps) / unitB;
    return {
      key,
      allocBytesA,
      allocBytesB,
      allocDelta: allocBytesB - allocBytesA,
      liveBytesA,
      liveBytesB,
      liveDelta: liveBytesB - liveBytesA,
      samplesA: x?.alloc ?? 0,
      samplesB: y?.alloc ?? 0,
      liveSamplesA: x?.live ?? 0,
      liveSamplesB: y?.live ?? 0,
      // Filled in for the rows returned only (withIntervals).
      allocDeltaLow: null,
      allocDeltaHigh: null,
      liveDeltaLow: null,
      liveDeltaHigh: null,
      allocPValue: pValue(x?.alloc ?? 0, y?.alloc ?? 0),
      livePValue: pValue(x?.live ?? 0, y?.live ?? 0),
      allocQValue: null,
      liveQValue: null,
      significant: false,
    };
  };
  const keys = new Set([...sa.rows.keys(), ...sb.rows.keys()]);
  // Stacks: keyed by their node in the shared tree, ordered by the rank of their whole text;
  // the text (within STACK_TEXT_CHARS) is made for the rows returned only.
  const ranks = shared === null
    ? null
    : pathOrder(shared.parent, (c) => shared.text[c], shared.texts, [NO_LOCATION]);
  const all: DiffRow[] = [];
  const ids: (string | number)[] = [];
  for (const k of keys) {
    const r = row(typeof k === "string" ? k : "", sa.rows.get(k), sb.rows.get(k));
    if (r.allocDelta !== 0 || r.liveDelta !== 0) {
      all.push(r);
      ids.push(k);
    }
  }
  // Benjamini–Hochberg over both tests of every changed row (the unchanged ones have p = 1
  // and could only make the procedure more conservative).
  const ps: number[] = [];
  for (const r of all) ps.push(r.allocPValue ?? NaN, r.livePValue ?? NaN);
  const qs = benjaminiHochberg(ps);
  const alpha = 1 - confidence;
  let significantCount = 0;
  all.forEach((r, i) => {
    const qa = qs[2 * i], ql = qs[2 * i + 1];
    r.allocQValue = Number.isNaN(qa) ? null : qa;
    r.liveQValue = Number.isNaN(ql) ? null : ql;
    r.significant = (r.allocQValue ?? 1) <= alpha || (r.liveQValue ?? 1) <= alpha;
    if (r.significant) significantCount++;
  });
  const rank = (i: number) => {
    const k = ids[i] as number;
    return k < 0 ? ranks!.leaf[0] : ranks!.node[k];
  };
  const measure = (r: DiffRow) => Math.abs(sort === "alloc" ? r.allocDelta : r.liveDelta);
  const other = (r: DiffRow) => Math.abs(sort === "alloc" ? r.liveDelta : r.allocDelta);
  const order = all.map((_, i) => i).filter((i) => show === "all" || all[i].significant);
  order.sort((i, j) => {
    const x = all[i], y = all[j];
    return measure(y) - measure(x) || other(y) - other(x) ||
      (ranks !== null ? rank(i) - rank(j) : x.key < y.key ? -1 : x.key > y.key ? 1 : 0);
  });
  const shown = order.slice(0, limit > 0 ? limit : order.length).map((i) => {
    const r = all[i];
    if (shared !== null) {
      const k = ids[i] as number;
      if (k < 0) r.key = NO_LOCATION;
      else {
        const [data, node] = shared.where[k];
        r.key = stackLabel(data, node).key;
      }
    }
    return withIntervals(r);
  });
  const summary = (d: ProfileData) => ({
    executableName: d.info.executableName,
    sampleRate: d.info.sampleRate,
    events: d.stats.events,
    durationUs: d.stats.durationUs,
  });
  const kind = selectorA.live === "peak" ? "peak" : selectorA.live === "exact" ? "time" : "end";
  return {
    a: summary(a),
    b: summary(b),
    by,
    live: { kind, timeUsA: liveTime(a, selectorA), timeUsB: liveTime(b, selectorB) },
    sort,
    totals: totalsRow(withIntervals(row("(total)", sa.totals, sb.totals)), alpha),
    rowCount: all.length,
    significantCount,
    show,
    per,
    confidence,
    method: `${DIFF_METHOD}${tested ? "" : " (not computed: a trace's rate is not in (0, 1])"}`,
    rows: shown,
  };
}

/** How `trace diff` computes its intervals and tests. */
export const DIFF_METHOD: string =
  "interval: exact binomial intervals of A and B at confidence sqrt(c) combined; " +
  "test: exact conditional binomial test of the two rates (samples ~ Poisson(rate x words)), " +
  "Benjamini-Hochberg over both tests of every changed row at FDR 1 - c";

/** The totals' row: its test stands alone (no correction). */
function totalsRow(r: DiffRow, alpha: number): DiffRow {
  r.allocQValue = r.allocPValue;
  r.liveQValue = r.livePValue;
  r.significant = (r.allocPValue ?? 1) <= alpha || (r.livePValue ?? 1) <= alpha;
  return r;
}

/** A q- or p-value with two significant digits (`<1e-12` below). */
function formatQ(v: number): string {
  return v < 1e-12 ? "<1e-12" : v >= 0.01 ? v.toFixed(2) : v.toPrecision(2);
}

function signed(b: number): string {
  return (b > 0 ? "+" : "") + formatBytes(b);
}

/** The table `trace diff` prints; each of `notes` is a line after its header (`# note`). */
export function formatDiff(
  r: DiffResult,
  nameA = "A",
  nameB = "B",
  notes: readonly string[] = [],
): string[] {
  const live = r.live.kind === "end"
    ? "live@end"
    : r.live.kind === "peak"
    ? "live@peak"
    : `live@${r.live.timeUsA === null ? "-" : formatSeconds(r.live.timeUsA)}`;
  const head = [
    `# A: ${nameA} (${
      printable(r.a.executableName)
    }, ${r.a.events} events, rate ${r.a.sampleRate})`,
    `# B: ${nameB} (${
      printable(r.b.executableName)
    }, ${r.b.events} events, rate ${r.b.sampleRate})`,
    `# estimated bytes${
      r.per === "second" ? " per second" : ""
    } by ${r.by}, B - A: ${r.rowCount} changed${
      r.significantCount === undefined ? "" : `, ${r.significantCount} significant`
    }${r.show === "significant" ? " (listed)" : ""}${
      r.rows.length < (r.show === "significant" ? r.significantCount ?? 0 : r.rowCount)
        ? `, top ${r.rows.length} shown`
        : ""
    }, sorted by |change of ${r.sort === "alloc" ? "allocated" : live}|; live bytes are ${live}`,
    ...notes.map((n) => `# ${n}`),
    `# ${
      intervalNote(r.confidence ?? DEFAULT_CONFIDENCE)
    } of the change; q: Benjamini-Hochberg q-value of the exact test of no change, * when q <= ${+(1 -
      (r.confidence ?? DEFAULT_CONFIDENCE)).toFixed(6)}${
      r.show === "significant" ? "; --all lists every change" : ""
    }`,
  ];
  // The columns are named as the JSON rows' keys (`trace diff --json`).
  const cols = [
    "allocBytesA",
    "allocBytesB",
    "allocDelta",
    "allocDeltaLow..allocDeltaHigh",
    "liveBytesA",
    "liveBytesB",
    "liveDelta",
    "liveDeltaLow..liveDeltaHigh",
    "q",
  ];
  const range = (lo: number | null | undefined, hi: number | null | undefined) =>
    lo === null || lo === undefined || hi === null || hi === undefined
      ? "-"
      : `${signed(lo)}..${signed(hi)}`;
  const q = (x: DiffRow) => {
    const v = Math.min(x.allocQValue ?? Infinity, x.liveQValue ?? Infinity);
    return v === Infinity ? "-" : `${formatQ(v)}${x.significant ? " *" : "  "}`;
  };
  const cells = (x: DiffRow) => [
    formatBytes(x.allocBytesA),
    formatBytes(x.allocBytesB),
    signed(x.allocDelta),
    range(x.allocDeltaLow, x.allocDeltaHigh),
    formatBytes(x.liveBytesA),
    formatBytes(x.liveBytesB),
    signed(x.liveDelta),
    range(x.liveDeltaLow, x.liveDeltaHigh),
    q(x),
    printable(x.key),
  ];
  const all = [[...cols, r.by], ...r.rows.map(cells), cells(r.totals)];
  return [...head, ...alignColumns(all, cols.length)];
}
