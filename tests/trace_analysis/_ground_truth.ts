// Ground truth for the intervals: engine runs whose every allocation is known. A group is three
// sites — `kept` (n blocks kept to the end), `dropped` (n blocks collected) and `mixed` (n kept,
// n collected, interleaved) — so a group's true allocated and live words follow from n and the
// block size. memprof's generator is seeded by the domain id, as in OCaml 5.3, so the same
// program samples the same words every run; independent runs ("seeds") are made by a prefix of
// k × (the run's words) in large blocks that are then dropped: run k's groups are sampled by a
// stretch of the generator's stream no other run uses, and the groups of one run by consecutive
// disjoint stretches — independent trials under the model (each word sampled with
// probability λ).
import { Reader } from "../../lib/memtrace/mod.ts";
import { keep, runScenario, scenario } from "../../lib/scenario/mod.ts";
import { analyzeTrace, diffOf, type ProfileData, topOf } from "../../lib/trace_analysis/mod.ts";
import { emptySelector } from "../../lib/trace_analysis/profile.ts";
import { bytesInterval, wordsInterval } from "../../lib/trace_analysis/intervals.ts";
import { binomialCdf } from "../../lib/trace_analysis/intervals.ts";

/** A cell of the coverage table: a rate and a block length (words, header excluded). */
export interface Cell {
  rate: number;
  words: number;
}

export const RATES = [1e-2, 1e-3, 1e-4, 1e-5];
export const BLOCKS = { small: 64, large: 4096 } as const;
/** Expected allocated samples of a `kept` or `dropped` site aimed at (fewer where capped). */
export const TARGET_SAMPLES = 8;
/** Most blocks per site loop (small blocks at 1e-5 would need 12,400). */
export const MAX_BLOCKS = 4_000;

/** Blocks per site loop of a cell. */
export function blocksOf(c: Cell): number {
  return Math.min(MAX_BLOCKS, Math.ceil(TARGET_SAMPLES / (c.rate * (c.words + 1))));
}

export const SITES = ["kept", "dropped", "mixed"] as const;
export type Site = typeof SITES[number];

/** A site's name in group `g`. */
export function siteName(site: Site, g: number): string {
  return `Cov.${site}_${g}@cov.ml:${g + 1}:0-10`;
}

/** True words (header included) of a site: allocated, and live at the trace end. */
export function truth(c: Cell, site: Site): { alloc: number; live: number } {
  const n = blocksOf(c), w = c.words + 1;
  return site === "kept"
    ? { alloc: n * w, live: n * w }
    : site === "dropped"
    ? { alloc: n * w, live: 0 }
    : { alloc: 2 * n * w, live: n * w };
}

/** Words allocated by one run's groups. */
function runWords(c: Cell, groups: number): number {
  return groups * SITES.reduce((s, site) => s + truth(c, site).alloc, 0);
}

/** Run `k` of a cell with `groups` groups: its profile (collected, then analysed). */
export function runProfile(c: Cell, k: number, groups: number): ProfileData {
  return analyzeTrace(Reader.fromBytes(runTrace(c, k, groups))).data;
}

/** Run `k` of a cell with `groups` groups: its memtrace trace. With `grow`, the `kept` site of
 * group 0 allocates `grow` times as many blocks (a real change, for the diff's power). */
export function runTrace(c: Cell, k: number, groups: number, grow = 1): Uint8Array {
  const n = blocksOf(c);
  const sc = scenario({ name: "coverage", seed: 1 }, (s) => {
    const m = s.main;
    m.memprof.start({ samplingRate: c.rate });
    const big = 2 ** 26;
    let prefix = k * runWords(c, groups);
    const blocks = Math.floor(prefix / big);
    if (blocks > 0) {
      m.repeat(blocks, () => m.alloc(big - 1, { source: "major", at: "Cov.prefix@cov.ml:0:0-1" }));
    }
    prefix -= blocks * big;
    if (prefix > 1) m.alloc(prefix - 1, { source: "major", at: "Cov.prefix@cov.ml:0:0-1" });
    const source = c.words > 256 ? "major" : "caml";
    for (let g = 0; g < groups; g++) {
      m.repeat(
        g === 0 ? Math.round(n * grow) : n,
        () => m.alloc(c.words, { source, lifetime: keep.forever, at: siteName("kept", g) }),
      );
      m.repeat(n, () => m.alloc(c.words, { source, at: siteName("dropped", g) }));
      m.repeat(n, () => {
        m.alloc(c.words, { source, lifetime: keep.forever, at: siteName("mixed", g) });
        m.alloc(c.words, { source, at: siteName("mixed", g) });
      });
    }
    m.fullMajor();
    m.memprof.stop();
  });
  return runScenario(sc).ctf;
}

/** Per site of each group of a profile: samples allocated and live at the end. */
export function samplesBySite(data: ProfileData): Map<string, { alloc: number; live: number }> {
  const out = new Map<string, { alloc: number; live: number }>();
  const get = (k: string) => {
    let r = out.get(k);
    if (r === undefined) out.set(k, r = { alloc: 0, live: 0 });
    return r;
  };
  const base = emptySelector();
  for (const r of topOf(data, { ...base, live: "alloc" }, { limit: 0 }).rows) {
    get(r.key).alloc = r.samples;
  }
  for (const r of topOf(data, { ...base, live: "end" }, { limit: 0 }).rows) {
    get(r.key).live = r.samples;
  }
  return out;
}

/** One quantity of the table. */
export type Quantity = "allocated" | "live";

/** Coverage counts of a cell over `runs` runs of `groups` groups. */
export interface CellCoverage {
  cell: Cell;
  quantity: Quantity;
  trials: number;
  covered: number;
  /** The coverage the exact intervals give in theory at these truths (mean over sites). */
  expected: number;
}

/** The exact probability that the interval covers `words` at `rate`. */
export function expectedCoverage(words: number, rate: number, confidence: number): number {
  const mu = words * rate, sd = Math.sqrt(mu);
  const lo = Math.max(0, Math.floor(mu - 12 * sd - 10)), hi = Math.ceil(mu + 12 * sd + 10);
  let p = 0;
  for (let s = lo; s <= hi; s++) {
    const [l, h] = wordsInterval(s, rate, confidence);
    if (l <= words && words <= h) {
      p += binomialCdf(s, words, rate) - (s > 0 ? binomialCdf(s - 1, words, rate) : 0);
    }
  }
  return p;
}

/** Runs `runs` runs (from run `first`) of a cell and counts the intervals that cover the truth,
 * for allocated words (three sites per group) and live words (kept and mixed). */
export function coverage(
  c: Cell,
  runs: number,
  groups: number,
  confidence = 0.95,
  first = 0,
): CellCoverage[] {
  const res: Record<Quantity, CellCoverage> = {
    allocated: { cell: c, quantity: "allocated", trials: 0, covered: 0, expected: 0 },
    live: { cell: c, quantity: "live", trials: 0, covered: 0, expected: 0 },
  };
  const expected = new Map<number, number>();
  const exp = (w: number) => {
    let e = expected.get(w);
    if (e === undefined) expected.set(w, e = expectedCoverage(w, c.rate, confidence));
    return e;
  };
  for (let k = first; k < first + runs; k++) {
    const data = runProfile(c, k, groups);
    const seen = samplesBySite(data);
    for (let g = 0; g < groups; g++) {
      for (const site of SITES) {
        const t = truth(c, site);
        const s = seen.get(siteName(site, g)) ?? { alloc: 0, live: 0 };
        for (const q of ["allocated", "live"] as const) {
          const words = q === "allocated" ? t.alloc : t.live;
          if (words === 0) continue; // a dropped site's live set: trivially 0
          const b = bytesInterval(data, q === "allocated" ? s.alloc : s.live, confidence);
          const bytes = words * 8;
          res[q].trials++;
          if (b.low! <= bytes && bytes <= b.high!) res[q].covered++;
          res[q].expected += exp(words);
        }
      }
    }
  }
  for (const r of Object.values(res)) r.expected /= r.trials;
  return [res.allocated, res.live];
}

/** The central interval of a Binomial(n, p) count holding probability `level` (for bounds on
 * observed coverage and false-positive counts). */
export function binomialBounds(n: number, p: number, level = 0.999): [number, number] {
  const tail = (1 - level) / 2;
  let lo = 0;
  while (binomialCdf(lo, n, p) < tail) lo++;
  let hi = n;
  while (hi > 0 && binomialCdf(hi - 1, n, p) >= 1 - tail) hi--;
  return [lo, hi];
}

/** False positives of `trace diff` between runs of one program: per diff, whether any change
 * is called significant (Benjamini–Hochberg controls that at 1 − confidence when nothing
 * changed), and over all tests, the raw p-values at most 1 − confidence. */
export interface FalsePositives {
  cell: Cell;
  diffs: number;
  diffsWithAny: number;
  tests: number;
  rawRejections: number;
}

/** Diffs run `first + 2i` against `first + 2i + 1`, `pairs` times. */
export function falsePositives(
  c: Cell,
  pairs: number,
  groups: number,
  confidence = 0.95,
  first = 0,
): FalsePositives {
  const r: FalsePositives = { cell: c, diffs: 0, diffsWithAny: 0, tests: 0, rawRejections: 0 };
  // The prefix differs by design: left out of both traces.
  const sel = { ...emptySelector(), exclude: "Cov.prefix" };
  for (let i = 0; i < pairs; i++) {
    const a = runProfile(c, first + 2 * i, groups), b = runProfile(c, first + 2 * i + 1, groups);
    const d = diffOf(a, b, sel, sel, { limit: 0, confidence, show: "all" });
    r.diffs++;
    const rows = d.rows;
    if (rows.some((x) => x.significant)) r.diffsWithAny++;
    for (const x of rows) {
      for (const p of [x.allocPValue, x.livePValue]) {
        if (p === null || p === undefined) continue;
        r.tests++;
        if (p <= 1 - confidence) r.rawRejections++;
      }
    }
  }
  return r;
}
