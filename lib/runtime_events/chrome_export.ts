/**
 * Export of a ring file to Chrome's trace-event JSON, the format Perfetto UI,
 * speedscope and chrome://tracing open.
 *
 * Mapping, one process and one thread track per ring ("domain N"):
 *
 * - runtime phases → complete events (`X`) with the begin's timestamp and the
 *   exact duration;
 * - span user events → `B` / `E` pairs;
 * - runtime counters and int user events → counters (`C`), one counter per
 *   name and domain (`"minor_allocated (domain 0)"`, args `{value}`);
 * - lifecycle events, unit and custom user events, alloc bucket events and
 *   lost data → thread-scoped instants (`i`);
 * - `M` metadata names the process and each domain and orders the tracks.
 *
 * Timestamps are the file's nanoseconds written as microseconds with up to
 * three decimals, computed from the integers (no float rounding). They are
 * read as unsigned 64-bit integers, as the runtime writes them (C's
 * `uint64_t`; OCaml's consumer hands them over as a signed `Int64`, which the
 * dump prints): 2^63 ns is 9223372036854775.808 µs, never negative.
 *
 * A timestamp smaller than the one before it on the same ring (a corrupt or
 * hand-made ring: CLOCK_MONOTONIC does not go back) is clamped to it, and
 * counted (`summary.clampedTimes`): every track's times then never decrease
 * in ring order, which the nesting below relies on — no negative duration,
 * no end before its begin.
 *
 * Unmatched begins and ends never produce invalid nesting. Each ring keeps one
 * stack of open phases and spans:
 *
 * - an end whose begin is not on the stack (overwritten by the ring, or before
 *   the file started) becomes an instant of that name with
 *   `args.unmatched = "end without begin"`;
 * - an end that matches an entry below the top first closes the entries above
 *   it at that timestamp (`args.truncated` says why on phases);
 * - lost events close everything open on that ring at the last timestamp seen
 *   before the gap, and a `lost_events` instant (args `{words}`) is placed at
 *   the next timestamp of the ring;
 * - what is still open at the end of the file is closed at the ring's last
 *   timestamp.
 *
 * Events are written sorted by timestamp; for equal timestamps a phase comes
 * before the phases it encloses and otherwise the file's order is kept, so the
 * per-track order is the order of the ring.
 *
 * @module
 */

import { type CursorOptions, RuntimeEventsCursor, type UserEventInfo } from "./consumer.ts";
import { counterName, Lifecycle, lifecycleName, phaseName } from "./enums.ts";
import { hexBytes } from "./dump.ts";

/** An instant added to a domain's track (e.g. from a memtrace trace). */
export interface ExtraInstant {
  /** Track (domain) to put it on. */
  domain: number;
  /** Timestamp in the ring's clock, nanoseconds. */
  tsNs: bigint;
  /** Event name. */
  name: string;
  /** Category. */
  cat: string;
  /** Arguments shown with the event. */
  args?: Record<string, number | string | boolean>;
}

/** Options of {@linkcode exportChromeTrace}. */
export interface ChromeExportOptions extends CursorOptions {
  /** Process id written in every event; default: EV_RING_START's pid, else `defaultPid`. */
  pid?: number;
  /** Process id when the ring has no EV_RING_START (default 1). */
  defaultPid?: number;
  /** Name of the process track; default `OCaml <pid> (runtime_events)`. */
  processName?: string;
  /**
   * Instants to merge (already in the ring's clock); or a function that makes
   * them once the ring has been read, given the time anchors found in it.
   */
  extraInstants?: Iterable<ExtraInstant> | ((anchors: RingAnchors) => Iterable<ExtraInstant>);
  /** Free-form facts copied into the file's `otherData`. */
  otherData?: Record<string, string | number | boolean>;
}

/** Time anchors of a ring file, for aligning other traces with it. */
export interface RingAnchors {
  /** Timestamp of the first EV_RING_START, if still in the file. */
  ringStartNs: bigint | null;
  /** Earliest timestamp in the file, or null when it has no events. */
  firstNs: bigint | null;
}

/** One event of the exported trace. Timestamps stay exact (integer nanoseconds). */
export interface ChromeRecord {
  /** Phase type: `X`, `B`, `E`, `i`, `C` or `M`. */
  ph: "X" | "B" | "E" | "i" | "C" | "M";
  /** Event name. */
  name: string;
  /** Category (not on metadata). */
  cat?: string;
  /** Timestamp in nanoseconds (0 on metadata). */
  tsNs: bigint;
  /** Duration of an `X` event, nanoseconds. */
  durNs?: bigint;
  /** Track: the domain. */
  tid: number;
  /** Arguments. */
  args?: Record<string, unknown>;
}

/** What the export did, counted. */
export interface ChromeExportSummary {
  /** Process id used. */
  pid: number;
  /** Domains with a track, ascending. */
  domains: number[];
  /** `X` events from matched phase begin/end pairs. */
  phases: number;
  /** `B`/`E` pairs from span user events. */
  spans: number;
  /** `C` events. */
  counters: number;
  /** `i` events from the ring (lifecycle, unit, custom, alloc, lost, unmatched ends). */
  instants: number;
  /** Phases or spans closed without their own end (lost, crossing, or still open at the end). */
  truncated: number;
  /** Ends without a begin, exported as instants. */
  unmatchedEnds: number;
  /** `lost_events` instants, and the ring words they report. */
  lostReports: number;
  /** Sum of the lost ring words. */
  lostWords: number;
  /** Instants merged from `extraInstants`. */
  extraInstants: number;
  /** Ring events whose timestamp was smaller than the previous one of their ring, clamped to
   * it. */
  clampedTimes: number;
  /** The time anchors of the ring. */
  anchors: RingAnchors;
}

/** An exported trace: metadata first, then events by timestamp. */
export interface ChromeTrace {
  /** Every event, in output order. */
  records: ChromeRecord[];
  /** Counts. */
  summary: ChromeExportSummary;
  /** Written as the file's `otherData`. */
  otherData: Record<string, string | number | boolean>;
}

interface Sortable extends ChromeRecord {
  seq: number;
}

interface Open {
  kind: "phase" | "span";
  /** Phase ordinal or user event id. */
  id: number;
  name: string;
  tsNs: bigint;
  seq: number;
}

interface Ring {
  stack: Open[];
  lastNs: bigint | null;
  pendingLost: number;
}

/**
 * The name a user event is exported under: its name, or `(unnamed user event <id>)` for an empty
 * name slot (a wiped or corrupt name table), since a trace event needs a non-empty name.
 */
function userName(ev: UserEventInfo): string {
  return ev.name === "" ? `(unnamed user event ${ev.id})` : ev.name;
}

/**
 * Reads every ring of `image` (from position 0, as a fresh OCaml cursor; or,
 * given a cursor, from its positions: e.g. one reading a file on demand,
 * window by window) and builds the Chrome trace. Throws
 * `RuntimeEventsFormatError` on a corrupt image.
 */
export function exportChromeTrace(
  image: Uint8Array | ArrayBuffer | RuntimeEventsCursor,
  options: ChromeExportOptions = {},
): ChromeTrace {
  const out: Sortable[] = [];
  const rings = new Map<number, Ring>();
  let seq = 0;
  let ringPid: number | null = null;
  const anchors: RingAnchors = { ringStartNs: null, firstNs: null };
  const s: ChromeExportSummary = {
    pid: 0,
    domains: [],
    phases: 0,
    spans: 0,
    counters: 0,
    instants: 0,
    truncated: 0,
    unmatchedEnds: 0,
    lostReports: 0,
    lostWords: 0,
    extraInstants: 0,
    clampedTimes: 0,
    anchors,
  };
  const decoders = options.decoders;

  const ring = (d: number): Ring => {
    let r = rings.get(d);
    if (r === undefined) {
      r = { stack: [], lastNs: null, pendingLost: 0 };
      rings.set(d, r);
    }
    return r;
  };
  const emit = (rec: ChromeRecord, at = seq++): void => {
    (rec as Sortable).seq = at;
    out.push(rec as Sortable);
  };
  const instant = (
    d: number,
    tsNs: bigint,
    name: string,
    cat: string,
    args?: Record<string, unknown>,
  ): void => {
    s.instants++;
    emit({ ph: "i", name, cat, tsNs, tid: d, ...(args ? { args } : {}) });
  };
  // Called for every event with a timestamp, before it is handled: the timestamp read as
  // unsigned, clamped to the ring's previous one; the ring's `lastNs` is then the event's time.
  const at = (d: number, raw: bigint): Ring => {
    const r = ring(d);
    let tsNs = BigInt.asUintN(64, raw);
    if (r.lastNs !== null && tsNs < r.lastNs) {
      tsNs = r.lastNs;
      s.clampedTimes++;
    }
    if (anchors.firstNs === null || tsNs < anchors.firstNs) anchors.firstNs = tsNs;
    if (r.pendingLost > 0) {
      s.lostReports++;
      instant(d, tsNs, "lost_events", "lost", { words: r.pendingLost });
      r.pendingLost = 0;
    }
    r.lastNs = tsNs;
    return r;
  };
  const close = (d: number, o: Open, tsNs: bigint, truncated: string | null): void => {
    if (truncated !== null) s.truncated++;
    if (o.kind === "phase") {
      s.phases++;
      emit({
        ph: "X",
        name: o.name,
        cat: "gc",
        tsNs: o.tsNs,
        durNs: tsNs - o.tsNs,
        tid: d,
        ...(truncated !== null ? { args: { truncated } } : {}),
      }, o.seq);
    } else {
      s.spans++;
      emit({ ph: "E", name: o.name, cat: "user", tsNs, tid: d });
    }
  };
  const closeAbove = (d: number, r: Ring, depth: number, tsNs: bigint, why: string): void => {
    while (r.stack.length > depth) close(d, r.stack.pop()!, tsNs, why);
  };
  const end = (d: number, raw: bigint, kind: Open["kind"], id: number, name: string): void => {
    const r = at(d, raw);
    const tsNs = r.lastNs!;
    let i = r.stack.length - 1;
    while (i >= 0 && (r.stack[i].kind !== kind || r.stack[i].id !== id)) i--;
    if (i < 0) {
      s.unmatchedEnds++;
      instant(d, tsNs, name, kind === "phase" ? "gc" : "user", {
        unmatched: "end without begin",
      });
      return;
    }
    closeAbove(d, r, i + 1, tsNs, `closed by the end of ${name}`);
    close(d, r.stack.pop()!, tsNs, null);
  };

  const cursor = image instanceof RuntimeEventsCursor
    ? image
    : new RuntimeEventsCursor(image, options);
  cursor.readAll({
    runtimeBegin: (d, raw, phase) => {
      const r = at(d, raw);
      r.stack.push({
        kind: "phase",
        id: phase,
        name: phaseName(phase),
        tsNs: r.lastNs!,
        seq: seq++,
      });
    },
    runtimeEnd: (d, tsNs, phase) => end(d, tsNs, "phase", phase, phaseName(phase)),
    runtimeCounter: (d, raw, counter, value) => {
      const tsNs = at(d, raw).lastNs!;
      s.counters++;
      emit({
        ph: "C",
        name: `${counterName(counter)} (domain ${d})`,
        cat: "counter",
        tsNs,
        tid: d,
        args: { value },
      });
    },
    alloc: (d, raw, buckets) => {
      const tsNs = at(d, raw).lastNs!;
      instant(d, tsNs, "alloc", "alloc", { buckets });
    },
    lifecycle: (d, raw, event, data) => {
      const tsNs = at(d, raw).lastNs!;
      if (event === Lifecycle.EV_RING_START) {
        if (anchors.ringStartNs === null) anchors.ringStartNs = tsNs;
        if (ringPid === null && data !== null) ringPid = Number(data);
      }
      instant(d, tsNs, lifecycleName(event), "lifecycle", data === null ? undefined : { data });
    },
    lostEvents: (d, words) => {
      const r = ring(d);
      s.lostWords += words;
      if (r.lastNs !== null) {
        closeAbove(d, r, 0, r.lastNs, "end lost (ring overwritten)");
      }
      r.pendingLost += words;
    },
    userUnit: (d, raw, ev) => {
      const tsNs = at(d, raw).lastNs!;
      instant(d, tsNs, userName(ev), "user");
    },
    userInt: (d, raw, ev, value) => {
      const tsNs = at(d, raw).lastNs!;
      s.counters++;
      emit({
        ph: "C",
        name: `${userName(ev)} (domain ${d})`,
        cat: "user",
        tsNs,
        tid: d,
        args: { value },
      });
    },
    userSpan: (d, raw, ev, span) => {
      if (span === "end") {
        end(d, raw, "span", ev.id, userName(ev));
        return;
      }
      const r = at(d, raw);
      const tsNs = r.lastNs!;
      const o: Open = { kind: "span", id: ev.id, name: userName(ev), tsNs, seq: seq++ };
      r.stack.push(o);
      emit({ ph: "B", name: o.name, cat: "user", tsNs, tid: d }, o.seq);
    },
    userCustom: (d, raw, ev, payload, decoded) => {
      const tsNs = at(d, raw).lastNs!;
      const decoder = decoders?.get(ev.name);
      const args: Record<string, unknown> = decoder === undefined
        ? { payload: hexBytes(payload) }
        : { value: decoder.format ? decoder.format(decoded) : decoded };
      instant(d, tsNs, userName(ev), "user", args);
    },
  });

  for (const [d, r] of rings) {
    const last = r.lastNs ?? anchors.firstNs ?? 0n;
    closeAbove(d, r, 0, last, "no end in the ring");
    if (r.pendingLost > 0) {
      s.lostReports++;
      instant(d, last, "lost_events", "lost", { words: r.pendingLost });
    }
  }

  const extra = typeof options.extraInstants === "function"
    ? options.extraInstants(anchors)
    : options.extraInstants;
  if (extra !== undefined) {
    // After every ring event of the same timestamp.
    for (const e of extra) {
      s.extraInstants++;
      ring(e.domain);
      emit({
        ph: "i",
        name: e.name,
        cat: e.cat,
        tsNs: e.tsNs,
        tid: e.domain,
        ...(e.args ? { args: e.args } : {}),
      });
    }
  }

  out.sort((a, b) => a.tsNs < b.tsNs ? -1 : a.tsNs > b.tsNs ? 1 : a.seq - b.seq);

  const pid = options.pid ?? ringPid ?? options.defaultPid ?? 1;
  s.pid = pid;
  s.domains = [...rings.keys()].sort((a, b) => a - b);
  const meta: ChromeRecord[] = [{
    ph: "M",
    name: "process_name",
    tsNs: 0n,
    tid: 0,
    args: { name: options.processName ?? `OCaml ${pid} (runtime_events)` },
  }];
  for (const d of s.domains) {
    meta.push({ ph: "M", name: "thread_name", tsNs: 0n, tid: d, args: { name: `domain ${d}` } });
    meta.push({ ph: "M", name: "thread_sort_index", tsNs: 0n, tid: d, args: { sort_index: d } });
  }
  const records: ChromeRecord[] = meta;
  for (const r of out) {
    delete (r as Partial<Sortable>).seq;
    records.push(r);
  }
  return {
    records,
    summary: s,
    otherData: {
      source: "memprof-lab events export",
      clock: "ring timestamps (CLOCK_MONOTONIC ns) / 1000",
      ...options.otherData,
    },
  };
}

/** Nanoseconds as exact decimal microseconds: 744340150570 → "744340150.57". */
export function nsToMicrosText(ns: bigint): string {
  const neg = ns < 0n;
  const a = neg ? -ns : ns;
  let text = (a / 1000n).toString();
  const frac = a % 1000n;
  if (frac !== 0n) text += "." + frac.toString().padStart(3, "0").replace(/0+$/, "");
  return neg ? "-" + text : text;
}

function jsonValue(v: unknown): string {
  switch (typeof v) {
    case "bigint":
      return v.toString();
    case "number":
      return Number.isFinite(v) ? JSON.stringify(v) : "null";
    case "string":
    case "boolean":
      return JSON.stringify(v);
    case "object": {
      if (v === null) return "null";
      if (Array.isArray(v)) return "[" + v.map(jsonValue).join(",") + "]";
      if (v instanceof Uint8Array) return JSON.stringify(hexBytes(v));
      const parts: string[] = [];
      for (const [k, x] of Object.entries(v)) {
        if (x !== undefined) parts.push(JSON.stringify(k) + ":" + jsonValue(x));
      }
      return "{" + parts.join(",") + "}";
    }
    default:
      return "null";
  }
}

function recordJson(r: ChromeRecord, pid: number): string {
  let t = `{"name":${JSON.stringify(r.name)}`;
  if (r.cat !== undefined) t += `,"cat":${JSON.stringify(r.cat)}`;
  t += `,"ph":"${r.ph}","ts":${nsToMicrosText(r.tsNs)}`;
  if (r.durNs !== undefined) t += `,"dur":${nsToMicrosText(r.durNs)}`;
  t += `,"pid":${pid},"tid":${r.tid}`;
  if (r.ph === "i") t += `,"s":"t"`;
  if (r.args !== undefined) t += `,"args":${jsonValue(r.args)}`;
  return t + "}";
}

/**
 * Writes the trace as JSON text through `write` (called with chunks of about
 * 64 KiB): `{"traceEvents":[…],"displayTimeUnit":"ns","otherData":{…}}`, one
 * event per line. The text depends only on the trace (byte-identical for the
 * same input).
 */
export function writeChromeTraceJson(trace: ChromeTrace, write: (chunk: string) => void): void {
  const pid = trace.summary.pid;
  let buf = '{"traceEvents":[\n';
  const n = trace.records.length;
  for (let i = 0; i < n; i++) {
    buf += recordJson(trace.records[i], pid) + (i + 1 < n ? ",\n" : "\n");
    if (buf.length > 1 << 16) {
      write(buf);
      buf = "";
    }
  }
  buf += `],\n"displayTimeUnit":"ns",\n"otherData":${jsonValue(trace.otherData)}}\n`;
  write(buf);
}

/** The trace as one JSON string (see {@linkcode writeChromeTraceJson}). */
export function chromeTraceJson(trace: ChromeTrace): string {
  const parts: string[] = [];
  writeChromeTraceJson(trace, (c) => parts.push(c));
  return parts.join("");
}
