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
import { formatBytes, formatSeconds } from "./top.ts";
import { KeyIndex } from "./_index.ts";
import { printable } from "../util/printable.ts";

/** Options of {@linkcode diffOf}. */
export interface DiffOptions {
  /** What rows stand for (default `site`; for functions, stacks containing the function). */
  by?: GroupBy;
  /** Most rows returned (default 20; 0 for all). */
  limit?: number;
  /** Order by the absolute change of allocated bytes (default) or of live bytes. */
  sort?: "alloc" | "live";
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
  const row = (
    key: string,
    x: { alloc: number; live: number } | undefined,
    y: { alloc: number; live: number } | undefined,
  ): DiffRow => {
    const allocBytesA = (x?.alloc ?? 0) * sa.bps, allocBytesB = (y?.alloc ?? 0) * sb.bps;
    const liveBytesA = (x?.live ?? 0) * sa.bps, liveBytesB = (y?.live ?? 0) * sb.bps;
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
  const rank = (i: number) => {
    const k = ids[i] as number;
    return k < 0 ? ranks!.leaf[0] : ranks!.node[k];
  };
  const measure = (r: DiffRow) => Math.abs(sort === "alloc" ? r.allocDelta : r.liveDelta);
  const other = (r: DiffRow) => Math.abs(sort === "alloc" ? r.liveDelta : r.allocDelta);
  const order = all.map((_, i) => i);
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
    return r;
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
    totals: row("(total)", sa.totals, sb.totals),
    rowCount: all.length,
    rows: shown,
  };
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
    `# estimated bytes by ${r.by}, B - A: ${r.rowCount} changed${
      r.rows.length < r.rowCount ? `, top ${r.rows.length} shown` : ""
    }, sorted by |change of ${r.sort === "alloc" ? "allocated" : live}|; live bytes are ${live}`,
    ...notes.map((n) => `# ${n}`),
  ];
  // The columns are named as the JSON rows' keys (`trace diff --json`).
  const cols = [
    "allocBytesA",
    "allocBytesB",
    "allocDelta",
    "liveBytesA",
    "liveBytesB",
    "liveDelta",
  ];
  const cells = (x: DiffRow) => [
    formatBytes(x.allocBytesA),
    formatBytes(x.allocBytesB),
    signed(x.allocDelta),
    formatBytes(x.liveBytesA),
    formatBytes(x.liveBytesB),
    signed(x.liveDelta),
    printable(x.key),
  ];
  const all = [[...cols, r.by], ...r.rows.map(cells), cells(r.totals)];
  // Folded, not spread: with --limit 0 the rows can be more than a call's arguments may be.
  const widths = cols.map((_, c) => all.reduce((w, row) => Math.max(w, row[c].length), 0));
  return [
    ...head,
    ...all.map((row) =>
      row.slice(0, cols.length).map((cell, c) => cell.padStart(widths[c])).join("  ") + "  " +
      row[cols.length]
    ),
  ];
}
