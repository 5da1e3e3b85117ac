/**
 * memtrace's `hotspots` tool (bin/hotspots.ml): the allocation sites above 0.5 % of the samples,
 * heaviest first, each with up to three of its positions and the callers that account for much
 * of it.
 *
 * For each allocation, the allocation point (the last frame, described by its last inlined
 * location; a frame with no location borrows from up to two frames before it) gets the samples;
 * every other function of the backtrace, once per allocation, gets them as "total" and is paired
 * with the allocating function in a Misra–Gries heavy-hitters summary of 10,000 counters. The
 * report then walks that summary.
 *
 * The order of the report is OCaml's: the summary is an OCaml `Hashtbl` traversed in bucket
 * order, its entries are gathered into another `Hashtbl` (folded into a list, so reversed), and
 * both lists are put in order by a stable `List.sort`, ties keeping the bucket order. Those two
 * tables are modelled exactly ({@linkcode OCamlHashtbl}, with memtrace's own hash functions);
 * the function table keyed by (file, name) too, with `Hashtbl.hash`. The tables memtrace only
 * looks up (location codes, functions seen in this backtrace) are a table in typed arrays
 * (codes to entries) and a mark per function.
 *
 * memtrace's tool assumes 8-byte words, whatever the trace says.
 * @module
 */
import { locationLookup } from "../memtrace/mod.ts";
import { forEachView, type TraceInput } from "./input.ts";
import { camlHash } from "./_hash.ts";
import { OCamlHashtbl } from "./_hashtbl.ts";
import { PairHeavyHitters } from "./_heavy_hitters.ts";
import { ShadowingIntMap } from "./_int_map.ts";
import { printfF, printfHex } from "./_printf.ts";
import { TraceToolError } from "./errors.ts";
import { printable } from "../util/printable.ts";

interface LocEntry {
  readonly line: number;
  readonly startCh: number;
  readonly endCh: number;
  readonly func: Func;
  allocCount: number;
}

interface Func {
  readonly id: number;
  readonly name: string;
  readonly filename: string;
  /** memtrace's `locs` list is built by consing: here in insertion order, read backwards. */
  readonly locsAdded: LocEntry[];
  totalCount: number;
  nAllocs: number;
  totalDistToAlloc: number;
}

/** memtrace's `locs` list, newest first. */
function locsList(f: Func): LocEntry[] {
  return f.locsAdded.slice().reverse();
}

function directAllocs(f: Func): number {
  let k = 0;
  for (const e of f.locsAdded) k += e.allocCount;
  return k;
}

function totalAllocs(f: Func): number {
  return f.totalCount + directAllocs(f);
}

/** The functions of a (caller, allocator) pair, packed in one number (ids below 2^26). */
const PAIR_SHIFT = 2 ** 26;

/** `Func_tbl`: functions hashed by `id * 21089245`. */
const FUNC_HASH = {
  hash: (f: Func) => Math.imul(f.id, 21089245),
  equal: (f: Func, g: Func) => f.id === g.id,
};

/** The heavy-hitters summary's key: `(a.id * 1231441) + (b.id * 3821)` on the pair. */
const PAIR_HASH = {
  hash: (p: number) => {
    const b = p % PAIR_SHIFT;
    return (Math.imul((p - b) / PAIR_SHIFT, 1231441) + Math.imul(b, 3821)) | 0;
  },
  equal: (p: number, q: number) => p === q,
};

/** The generic `Hashtbl` on `(filename, funcname)`: `Hashtbl.hash` of the pair. */
const NAME_PAIR_HASH = {
  hash: (k: readonly [string, string]) => camlHash(k),
  equal: (a: readonly [string, string], b: readonly [string, string]) =>
    a[0] === b[0] && a[1] === b[1],
};

/** hotspots' `%a` for byte counts: `%4.0f B` under 100, then kB, MB, GB, TB with `%4.1f`. */
function printBytes(n: number): string {
  if (n < 100) return printfF(n, 0, 4) + " B";
  if (n < 100 * 1024) return printfF(n / 1024, 1, 4) + " kB";
  if (n < 100 * 1024 * 1024) return printfF(n / 1024 / 1024, 1, 4) + " MB";
  if (n < 100 * 1024 * 1024 * 1024) return printfF(n / 1024 / 1024 / 1024, 1, 4) + " GB";
  return printfF(n / 1024 / 1024 / 1024 / 1024, 1, 4) + " TB";
}

/** memtrace's `hotspots` report for `reader`'s trace. Throws {@linkcode TraceToolError} on an
 * allocation with an empty backtrace (a stripped trace), where memtrace's tool fails with
 * `Invalid_argument("index out of bounds")`. */
export function hotspots(reader: TraceInput): string {
  const lookup = locationLookup(reader);
  // Location codes to their entries' indices in `entryList`.
  const entries = new ShadowingIntMap();
  const entryList: LocEntry[] = [];
  const funcs = new OCamlHashtbl<readonly [string, string], Func>(NAME_PAIR_HASH, 10000);
  const funcById: Func[] = [];
  const hh = new PairHeavyHitters(10000, PAIR_HASH.hash);
  // Per function id: the last allocation whose backtrace had it.
  let seen = new Float64Array(1024);
  let allocs = 0;
  let totalSamples = 0;

  /** memtrace's `describe_location`: file, function, line, start, end of frame `i`. */
  const describe = (
    buf: Float64Array,
    i: number,
    maxDiscard: number,
  ): [string, string, number, number, number] => {
    const locs = lookup(buf[i]);
    if (locs.length === 0) {
      if (i > 0 && maxDiscard > 0) return describe(buf, i - 1, maxDiscard - 1);
      return ["??", "#" + printfHex(buf[i]), 0, 0, 0];
    }
    const l = locs[locs.length - 1];
    return [l.filename, l.defname, l.line, l.startChar, l.endChar];
  };

  /** memtrace's `add_loc`: the entry of frame `i`'s location code, made on first sight. */
  const addLoc = (buf: Float64Array, i: number): LocEntry => {
    const code = buf[i];
    const known = entries.find(code);
    if (known !== undefined) return entryList[known];
    const [filename, funcname, line, startCh, endCh] = describe(buf, i, 2);
    const key = [filename, funcname] as const;
    let func = funcs.find(key);
    if (func === undefined) {
      const id = funcById.length;
      if (id >= PAIR_SHIFT) {
        throw new TraceToolError(
          "hotspots",
          `more than ${PAIR_SHIFT} functions`,
          reader.fileName,
          reader.eventOffset(),
        );
      }
      func = {
        id,
        filename,
        name: funcname,
        locsAdded: [],
        totalCount: 0,
        nAllocs: 0,
        totalDistToAlloc: 0,
      };
      funcById.push(func);
      funcs.add(key, func);
    }
    const entry: LocEntry = { line, startCh, endCh, func, allocCount: 0 };
    entries.add(code, entryList.length);
    entryList.push(entry);
    func.locsAdded.push(entry);
    return entry;
  };

  forEachView(reader, (ev) => {
    if (ev.kind !== "alloc") return;
    const buf = ev.backtraceBuffer;
    const len = ev.backtraceLength;
    const nsamples = ev.nsamples;
    if (len === 0) {
      throw new TraceToolError(
        "hotspots",
        `allocation ${ev.objId} has an empty backtrace (a stripped trace?); hotspots needs ` +
          `allocation sites`,
        reader.fileName,
        reader.eventOffset(),
      );
    }
    const allocpt = addLoc(buf, len - 1);
    allocpt.allocCount += nsamples;
    const mark = ++allocs;
    for (let i = len - 2; i >= 0; i--) {
      const b = addLoc(buf, i).func;
      if (b.id >= seen.length) {
        const grown = new Float64Array(2 * b.id + 2);
        grown.set(seen);
        seen = grown;
      }
      if (seen[b.id] === mark) continue;
      seen[b.id] = mark;
      b.totalCount += nsamples;
      b.nAllocs++;
      b.totalDistToAlloc += len - 1 - i;
      hh.add(b.id * PAIR_SHIFT + allocpt.func.id);
    }
    totalSamples += nsamples;
  });

  const info = reader.info;
  const wordsize = 8;
  const out: string[] = [
    `Trace for ${printable(info.executableName)} [${info.pid}]:\n   ${totalSamples} samples of ` +
    `${printBytes(totalSamples / info.sampleRate * wordsize)} allocations\n\n`,
  ];

  // Each callers list is an OCaml list built by consing: pushed here, read backwards.
  const hotAllocs = new OCamlHashtbl<Func, [Func, number][]>(FUNC_HASH, 100);
  hh.iter((pair, d1) => {
    const al = funcById[pair % PAIR_SHIFT];
    const fn = funcById[(pair - (pair % PAIR_SHIFT)) / PAIR_SHIFT];
    const allocProp = directAllocs(al) / totalSamples;
    if (!(allocProp > 0.005)) return;
    let callers = hotAllocs.find(al);
    if (callers === undefined) {
      callers = [];
      hotAllocs.add(al, callers);
    }
    const pairFreq = d1;
    const fnFreq = totalAllocs(fn);
    const a = 0.10, b = allocProp * 1.2;
    if (pairFreq / fnFreq > (a >= b ? a : b) && pairFreq / totalSamples > 0.005) {
      callers.push([fn, d1]);
    }
  });
  // `Func_tbl.fold (fun al c acc -> (al, !c) :: acc)`: the traversal order, reversed.
  const hot: [Func, [Func, number][]][] = [];
  hotAllocs.iter((al, c) => hot.push([al, c.slice().reverse()]));
  hot.reverse();
  // Array.prototype.sort is stable, as OCaml's List.sort (a merge sort) is.
  hot.sort(([al], [al2]) => directAllocs(al2) - directAllocs(al));

  for (const [al, callersList] of hot) {
    const direct = directAllocs(al);
    const freq = direct / totalSamples;
    const bytes = direct / info.sampleRate * wordsize;
    let line = `${printBytes(bytes)} (${printfF(100 * freq, 1, 4)}%) at ${printable(al.name)} (${
      printable(al.filename)
    }:`;
    let printed = 0;
    const locs = locsList(al).sort((l1, l2) => l2.allocCount - l1.allocCount);
    for (const l of locs) {
      if (l.allocCount <= 0) continue;
      if (printed < 3) {
        if (printed > 0) line += ", ";
        line += `${l.line}:${l.startCh}-${l.endCh}`;
      } else if (printed === 3) line += "...";
      printed++;
    }
    out.push(line + ")\n");
    let firstCaller = true;
    const callers = callersList.sort(([, f], [, f2]) => f2 - f);
    for (const [caller, callerFreq] of callers) {
      const total = totalAllocs(caller);
      const rfreq = callerFreq / total;
      const callerBytes = callerFreq / info.sampleRate * wordsize;
      if (total / totalSamples > 0.005) {
        if (firstCaller) out.push("      including:\n");
        firstCaller = false;
        out.push(
          `    ${printBytes(callerBytes)} via ${printable(caller.name)} (${
            printfF(100 * rfreq, 0)
          }% of this)\n`,
        );
      }
    }
    out.push("\n");
  }
  return out.join("");
}
