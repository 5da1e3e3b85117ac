/**
 * An independent, deliberately simple computation of what the analyses report: every event is
 * read into memory (memtrace's `readAll`), each object gets its frames as strings, and sums are
 * taken over objects. Nothing here shares code with lib/trace_analysis.
 * @module
 */
import { Reader } from "../../lib/memtrace/mod.ts";

/** One sampled object with everything the analyses look at. */
export interface NaiveObject {
  time: number;
  domain: number;
  source: number;
  length: number;
  n: number;
  /** Locations, outermost first, `defname@file:line:start-end`. */
  frames: string[];
  /** Their functions. */
  fns: string[];
  promotedAt: number | null;
  collectedAt: number | null;
}

/** Every sampled object of a trace. */
export function naiveObjects(bytes: Uint8Array): NaiveObject[] {
  const r = Reader.fromBytes(bytes, { onWarning: () => {} });
  const events = r.readAll();
  const byId = new Map<number, NaiveObject>();
  const all: NaiveObject[] = [];
  for (const { time, event: ev } of events) {
    const t = Math.max(0, time);
    if (ev.kind === "alloc") {
      const frames: string[] = [], fns: string[] = [];
      for (const code of ev.backtrace()) {
        for (const l of r.lookupLocationCode(code)) {
          frames.push(l.toString());
          fns.push(l.defname);
        }
      }
      const o: NaiveObject = {
        time: t,
        domain: ev.domain,
        source: ev.source,
        length: ev.length,
        n: ev.nsamples,
        frames,
        fns,
        promotedAt: null,
        collectedAt: null,
      };
      byId.set(ev.objId, o);
      all.push(o);
    } else {
      const o = byId.get(ev.objId);
      if (o === undefined || o.collectedAt !== null) continue;
      if (ev.kind === "promote") o.promotedAt ??= t;
      else o.collectedAt = t;
    }
  }
  r.close();
  return all;
}

/** What to keep and measure, in the naive computation's terms. */
export interface NaiveFilter {
  domains?: number[];
  sources?: number[];
  fromUs?: number;
  toUs?: number;
  /** Measure objects live at this time (µs) or at the end. */
  liveAt?: number | "end";
  sizeMin?: number;
  sizeMax?: number;
  function?: string;
  exclude?: string;
}

/** A group's sums. */
export interface NaiveGroup {
  samples: number;
  self: number;
  promoted: number;
  liveEnd: number;
}

const NO_LOCATION = "(no location)";

/** Sums per site (innermost location), function (stacks containing it, once) or stack. */
export function naiveGroups(
  objects: NaiveObject[],
  by: "site" | "function" | "stack",
  f: NaiveFilter = {},
): { groups: Map<string, NaiveGroup>; total: NaiveGroup } {
  const groups = new Map<string, NaiveGroup>();
  const total: NaiveGroup = { samples: 0, self: 0, promoted: 0, liveEnd: 0 };
  const get = (k: string) => {
    let g = groups.get(k);
    if (g === undefined) groups.set(k, g = { samples: 0, self: 0, promoted: 0, liveEnd: 0 });
    return g;
  };
  for (const o of objects) {
    if (f.domains && !f.domains.includes(o.domain)) continue;
    if (f.sources && !f.sources.includes(o.source)) continue;
    if (f.fromUs !== undefined && o.time < f.fromUs) continue;
    if (f.toUs !== undefined && o.time >= f.toUs) continue;
    if (f.sizeMin !== undefined && o.length < f.sizeMin) continue;
    if (f.sizeMax !== undefined && o.length > f.sizeMax) continue;
    if (f.function && !o.fns.some((x) => x.includes(f.function!))) continue;
    if (f.exclude && o.fns.some((x) => x.includes(f.exclude!))) continue;
    let promoted: boolean;
    if (f.liveAt === undefined || f.liveAt === "end") {
      if (f.liveAt === "end" && o.collectedAt !== null) continue;
      promoted = o.promotedAt !== null;
    } else {
      const t = f.liveAt;
      if (!(o.time <= t && (o.collectedAt === null || o.collectedAt > t))) continue;
      promoted = o.promotedAt !== null && o.promotedAt <= t;
    }
    const add = (g: NaiveGroup, self: boolean) => {
      g.samples += o.n;
      if (self) g.self += o.n;
      if (promoted) g.promoted += o.n;
      if (o.collectedAt === null) g.liveEnd += o.n;
    };
    add(total, true);
    if (by === "site") add(get(o.frames.at(-1) ?? NO_LOCATION), true);
    else if (by === "stack") {
      add(get(o.frames.length === 0 ? NO_LOCATION : o.frames.join(";")), true);
    } else {
      const leaf = o.fns.at(-1);
      for (const fn of new Set(o.fns)) add(get(fn), fn === leaf);
    }
  }
  return { groups, total };
}

/** Live samples of the whole trace at time `t` (µs). */
export function naiveLiveAt(objects: NaiveObject[], t: number): number {
  let s = 0;
  for (const o of objects) {
    if (o.time <= t && (o.collectedAt === null || o.collectedAt > t)) s += o.n;
  }
  return s;
}

/** A stack's key as documented, written independently of lib/trace_analysis's `stackLabel`: the
 * innermost frames of `full` (frames joined by `;`) within `maxChars` characters (at least one),
 * after `(N outer frames);` when some are left out. */
export function boundedStackKey(full: string, maxChars: number): string {
  if (full === "(no location)") return full;
  const frames = full.split(";");
  let chars = frames.at(-1)!.length, first = frames.length - 1;
  while (first > 0 && chars + 1 + frames[first - 1].length <= maxChars) {
    chars += 1 + frames[--first].length;
  }
  return (first > 0 ? `(${first} outer frames);` : "") + frames.slice(first).join(";");
}
