/**
 * The summary of a profile that the HTML report embeds when the trace has more stacks or classes
 * than a page can draw quickly: the stacks with the most samples, whole (as many as fit in a
 * budget of classes); every other stack merged into
 * one frame `(other stacks)`, under which the sites with the most samples among them stay (so
 * that the table by site stays exact for those) and the rest are merged into the frame itself.
 * Totals, the time views and the domain, source and size filters stay exact (the merged stacks
 * keep their classes' domains, sources and sizes, and the cube's time buckets); the function
 * filters and the tables by function and stack do not see inside the merged stacks. The page
 * says so, with the counts of what was left out ({@linkcode ProfileSummary}).
 *
 * A summary is planned from a profile's per-class totals ({@linkcode summaryPlan}): the report
 * command plans it after a first pass over the trace without the cube, then reads the trace again
 * with the plan (`AggregateOptions.mergeStacks`), so that the cube is only ever built for the
 * stacks kept, and finishes it with {@linkcode summarizeProfile}.
 * @module
 */
import type { Column, ProfileData, ProfileSummary } from "./profile.ts";
import { deriveFunctionPaths } from "./select.ts";

/** Options of {@linkcode summaryPlan}. */
export interface SummaryOptions {
  /** Most stacks kept whole (default {@linkcode REPORT_STACKS}). */
  stacks?: number;
  /** Most sites kept under `(other stacks)` (default {@linkcode REPORT_SITES}). */
  sites?: number;
  /** Most classes (stack, domain, source, size class) of the stacks and sites kept, as the
   * profile counts them (default {@linkcode REPORT_CLASSES}): what the page's data grows with.
   * Stacks are kept heaviest first while they fit (the heaviest always), then sites while
   * they fit in a quarter of it more. */
  classes?: number;
}

/** Stacks the report keeps whole, by default. */
export const REPORT_STACKS = 2_000;
/** Sites the report keeps under `(other stacks)`, by default. */
export const REPORT_SITES = 200;
/** Classes of the stacks the report keeps whole, by default (a quarter more for the sites). */
export const REPORT_CLASSES = 16_000;

/** The function (and frame) standing for the stacks a summary merged. */
export const OTHER_STACKS = "(other stacks)";
/** The file of the location of {@linkcode OTHER_STACKS}. */
export const OTHER_STACKS_FILE = "summary";

/** Code of a class node merged into `(other stacks)` itself. */
const OTHER = -2;

/** What to merge: per stack node, the node its classes keep (itself, for a stack kept) or a code
 * ≤ −2 (−2: `(other stacks)`; −3 − loc: `(other stacks);` site `loc`); and the counts the page
 * states. */
export interface SummaryPlan {
  /** Per location-path node: itself, or a merge code. */
  mergeStacks: Int32Array;
  /** The counts of what is kept and left out. */
  summary: ProfileSummary;
}

/** The samples allocated per class: the totals, or the cube's rows summed. */
function classSamples(data: ProfileData): Float64Array {
  const n = data.classes.node.length;
  const out = new Float64Array(n);
  if (data.totals !== null) {
    for (let i = 0; i < n; i++) out[i] = data.totals.samples[i];
  } else if (data.rows !== null) {
    const r = data.rows;
    for (let j = 0; j < r.cls.length; j++) out[r.cls[j]] += r.samples[j];
  }
  return out;
}

/** The `k` indices of `weights` with the largest positive weights, heaviest first (ties: the
 * smaller index first), among those `eligible` keeps. */
function heaviest(weights: Float64Array, k: number, eligible: (i: number) => boolean): number[] {
  const ids: number[] = [];
  for (let i = 0; i < weights.length; i++) if (weights[i] > 0 && eligible(i)) ids.push(i);
  ids.sort((x, y) => weights[y] - weights[x] || x - y);
  return ids.slice(0, k);
}

/**
 * Which stacks and sites a summary of `data` keeps, or null when it has at most `stacks` stacks
 * and `classes` classes with samples (the report then embeds it whole). Stacks are ranked by their samples allocated
 * (ties by node id, so the plan is deterministic); stacks with no known location are always kept.
 */
export function summaryPlan(data: ProfileData, options: SummaryOptions = {}): SummaryPlan | null {
  const maxStacks = options.stacks ?? REPORT_STACKS, maxSites = options.sites ?? REPORT_SITES;
  const maxClasses = options.classes ?? REPORT_CLASSES;
  if (data.summary) return null; // already a summary
  const c = data.classes, nn = data.nodes.parent.length, nl = data.locations.fn.length;
  const perClass = classSamples(data);
  const perNode = new Float64Array(nn), classesOf = new Float64Array(nn);
  let total = 0, noLocation = 0, withSamples = 0;
  for (let i = 0; i < perClass.length; i++) {
    total += perClass[i];
    if (perClass[i] > 0) withSamples++;
    if (c.node[i] >= 0) {
      perNode[c.node[i]] += perClass[i];
      if (perClass[i] > 0) classesOf[c.node[i]]++;
    } else noLocation += perClass[i];
  }
  let stacks = 0;
  for (let n = 0; n < nn; n++) if (perNode[n] > 0) stacks++;
  if (stacks <= maxStacks && withSamples <= maxClasses) return null;
  // The heaviest stacks while they fit (at least one).
  const kept: number[] = [];
  let keptClasses = 0;
  for (const n of heaviest(perNode, maxStacks, () => true)) {
    if (kept.length > 0 && keptClasses + classesOf[n] > maxClasses) break;
    kept.push(n);
    keptClasses += classesOf[n];
  }
  const mergeStacks = new Int32Array(nn).fill(OTHER);
  let keptSamples = noLocation;
  for (const n of kept) {
    mergeStacks[n] = n;
    keptSamples += perNode[n];
  }
  // The sites of the stacks left out, by their samples there.
  const perSite = new Float64Array(nl);
  for (let n = 0; n < nn; n++) {
    if (perNode[n] > 0 && mergeStacks[n] !== n) perSite[data.nodes.loc[n]] += perNode[n];
  }
  const siteClasses = new Float64Array(nl);
  for (let n = 0; n < nn; n++) {
    if (perNode[n] > 0 && mergeStacks[n] !== n) siteClasses[data.nodes.loc[n]] += classesOf[n];
  }
  let sitesLeftOut = 0;
  for (let l = 0; l < nl; l++) if (perSite[l] > 0) sitesLeftOut++;
  // The heaviest sites while their classes (at most those of their stacks) fit in a quarter more.
  const sites: number[] = [];
  let sitesClasses = 0;
  for (const l of heaviest(perSite, maxSites, () => true)) {
    if (sitesClasses + siteClasses[l] > maxClasses / 4) break;
    sites.push(l);
    sitesClasses += siteClasses[l];
  }
  const siteKept = new Uint8Array(nl);
  let siteSamples = 0;
  for (const l of sites) {
    siteKept[l] = 1;
    siteSamples += perSite[l];
  }
  for (let n = 0; n < nn; n++) {
    const l = data.nodes.loc[n];
    if (mergeStacks[n] !== n && siteKept[l] === 1) mergeStacks[n] = -3 - l;
  }
  return {
    mergeStacks,
    summary: {
      stacks: stacks + (noLocation > 0 ? 1 : 0),
      stacksKept: kept.length + (noLocation > 0 ? 1 : 0),
      samples: total,
      samplesKept: keptSamples,
      sitesMerged: sitesLeftOut,
      sitesKept: sites.length,
      samplesOfSitesKept: siteSamples,
    },
  };
}

/**
 * The summary `plan` makes of `data`: `data` read whole, or read with `plan.mergeStacks` (its
 * classes' nodes then already merge codes). The merged stacks become the frame
 * {@linkcode OTHER_STACKS} (a function of that name at `summary:0:0-0`) and, under it, one frame
 * per site kept; nodes, locations, functions and files no stack uses any more are dropped (ids
 * renumbered in their order). Classes of equal keys are not merged here (the report's packing
 * does). The result has no totals and carries `summary`.
 */
export function summarizeProfile(data: ProfileData, plan: SummaryPlan): ProfileData {
  const merge = plan.mergeStacks;
  const parent = data.nodes.parent, loc = data.nodes.loc;
  const nn = parent.length;
  const codeOf = (node: number) => (node >= 0 && node < merge.length ? merge[node] : node);
  // Nodes used: the kept stacks and their ancestors; sites used under (other stacks).
  const used = new Uint8Array(nn);
  const sitesUsed = new Set<number>();
  let otherUsed = false;
  const c = data.classes;
  for (let i = 0; i < c.node.length; i++) {
    const code = codeOf(c.node[i]);
    if (code >= 0) {
      for (let n = code; n >= 0 && used[n] === 0; n = parent[n]) used[n] = 1;
    } else if (code <= OTHER) {
      otherUsed = true;
      if (code < OTHER) sitesUsed.add(-3 - code);
    }
  }
  // Locations, functions and files still used, renumbered in order.
  const locUsed = new Uint8Array(data.locations.fn.length);
  for (let n = 0; n < nn; n++) if (used[n] === 1) locUsed[loc[n]] = 1;
  for (const l of sitesUsed) locUsed[l] = 1;
  const renumber = (flags: Uint8Array) => {
    const to = new Int32Array(flags.length).fill(-1);
    let k = 0;
    for (let i = 0; i < flags.length; i++) if (flags[i] === 1) to[i] = k++;
    return { to, count: k };
  };
  const locs = renumber(locUsed);
  const fnUsed = new Uint8Array(data.functions.length);
  const fileUsed = new Uint8Array(data.files.length);
  for (let l = 0; l < locUsed.length; l++) {
    if (locUsed[l] === 0) continue;
    fnUsed[data.locations.fn[l]] = 1;
    fileUsed[data.locations.file[l]] = 1;
  }
  const fns = renumber(fnUsed), files = renumber(fileUsed);
  const functions = data.functions.filter((_, f) => fnUsed[f] === 1);
  const fileNames = data.files.filter((_, f) => fileUsed[f] === 1);
  const pick = (col: Column, to?: Int32Array) => {
    const out: number[] = [];
    for (let l = 0; l < locUsed.length; l++) {
      if (locUsed[l] === 1) out.push(to === undefined ? col[l] : to[col[l]]);
    }
    return out;
  };
  const locations = {
    fn: pick(data.locations.fn, fns.to),
    file: pick(data.locations.file, files.to),
    line: pick(data.locations.line),
    start: pick(data.locations.start),
    end: pick(data.locations.end),
  };
  const nodes = renumber(used);
  const nodeParent: number[] = [], nodeLoc: number[] = [];
  for (let n = 0; n < nn; n++) {
    if (used[n] === 0) continue;
    nodeParent.push(parent[n] < 0 ? -1 : nodes.to[parent[n]]);
    nodeLoc.push(locs.to[loc[n]]);
  }
  // (other stacks), then a frame per site under it (in location order).
  let otherNode = -1;
  const siteNode = new Map<number, number>();
  if (otherUsed) {
    functions.push(OTHER_STACKS);
    fileNames.push(OTHER_STACKS_FILE);
    locations.fn.push(functions.length - 1);
    locations.file.push(fileNames.length - 1);
    locations.line.push(0);
    locations.start.push(0);
    locations.end.push(0);
    otherNode = nodeParent.length;
    nodeParent.push(-1);
    nodeLoc.push(locations.fn.length - 1);
    for (const l of [...sitesUsed].sort((x, y) => x - y)) {
      siteNode.set(l, nodeParent.length);
      nodeParent.push(otherNode);
      nodeLoc.push(locs.to[l]);
    }
  }
  const classNode = new Int32Array(c.node.length);
  for (let i = 0; i < c.node.length; i++) {
    const code = codeOf(c.node[i]);
    classNode[i] = code >= 0
      ? nodes.to[code]
      : code === OTHER
      ? otherNode
      : code < OTHER
      ? siteNode.get(-3 - code)!
      : -1;
  }
  return deriveFunctionPaths({
    ...data,
    functions,
    files: fileNames,
    locations,
    nodes: { parent: nodeParent, loc: nodeLoc, fnode: [] },
    fnodes: { parent: [], fn: [] },
    classes: { ...c, node: classNode },
    totals: null,
    summary: plan.summary,
  });
}
