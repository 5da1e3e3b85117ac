/**
 * memtrace's `identify` tool (bin/identify.ml): what a trace is (file, program, start date,
 * host, pid, sample rate, GC parameters, context) and statistics over its events (allocation
 * and collection rates, share promoted, sizes, runtime).
 *
 * Rates are over the time of the last event; byte counts are samples ÷ sample rate × bytes per
 * word. Sizes print as `%3.0f` with B, kB, MB, GB or TB (one decimal below 10), the sample rate
 * as `%.1e`, the start date as `Unix.gmtime` gives it, in UTC (the seconds truncated toward zero,
 * as C's conversion of the float `start_time × 1e-6` does). A trace with no events, or whose
 * events are all at time 0, has rates of `inf` or `-nan`, as memtrace prints them.
 *
 * memtrace's tool asserts that a promoted object is a live minor-heap allocation; a trace that
 * promotes anything else stops it with `Assert_failure`. We stop with a {@linkcode TraceToolError}
 * naming the object.
 * @module
 */
import { AllocationSource } from "../memtrace/types.ts";
import { forEachView, type TraceInput } from "./input.ts";
import { ShadowingIntMap } from "./_int_map.ts";
import { printfE, printfF } from "./_printf.ts";
import { TraceToolError } from "./errors.ts";
import { printable } from "../util/printable.ts";

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** identify's `%a` for byte counts. */
function printBytes(n: number): string {
  const scaled = (m: number, unit: string) => printfF(m, m < 10 ? 1 : 0, 3) + unit;
  if (n < 1000) return printfF(n, 0, 3) + " B";
  if (n < 1000 * 1024) return scaled(n / 1024, " kB");
  if (n < 1000 * 1024 * 1024) return scaled(n / 1024 / 1024, " MB");
  if (n < 1000 * 1024 * 1024 * 1024) return scaled(n / 1024 / 1024 / 1024, " GB");
  return scaled(n / 1024 / 1024 / 1024 / 1024, " TB");
}

function two(n: number): string {
  return String(n).padStart(2, "0");
}

/** `Unix.gmtime (µs × 1e-6)` printed as identify does: `Thu Jan 1 00:00:23 1970 UTC`. */
function gmtimeLine(startTimeUs: number): string {
  const seconds = Math.trunc(startTimeUs * 1e-6);
  const d = new Date(seconds * 1000);
  return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()} ` +
    `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} ` +
    `${d.getUTCFullYear()} UTC`;
}

/** OCaml's `a * b / 8` on 63-bit ints (wrapping product, division toward zero), as a float. */
function intMulDiv8(a: number, b: number): number {
  const p = a * b;
  if (Number.isSafeInteger(p)) return Math.trunc(p / 8);
  return Number(BigInt.asIntN(63, BigInt(a) * BigInt(b)) / 8n);
}

/** Options of {@linkcode identify}. */
export interface IdentifyOptions {
  /** The file name printed on the first line, as it was given (memtrace prints its argument).
   * Default: the reader's file name. */
  name?: string;
}

/** memtrace's `identify` output for `reader`'s trace. */
export function identify(reader: TraceInput, options: IdentifyOptions = {}): string {
  const info = reader.info;
  const name = options.name ?? reader.fileName ?? "";
  const out: string[] = [
    `Trace file ${name} (${printBytes(reader.sizeBytes())})\n`,
    `   of ${printable(info.executableName)}\n`,
    `   at ${gmtimeLine(info.startTime)}\n`,
    `   on host ${printable(info.hostName)} (${info.wordSize}-bit), pid ${info.pid}, sample rate ` +
    `${printfE(info.sampleRate, 1)}\n`,
    `   with OCaml GC params ${printable(info.ocamlRuntimeParams)}\n`,
  ];
  if (info.context !== undefined) out.push(`   with context: ${printable(info.context)}\n`);
  out.push("Trace statistics:\n");

  let tmax = 0;
  const minorLive = new ShadowingIntMap();
  // Only allocations with nsamples > 1 are kept: a collected unknown object counts one sample.
  const majorLiveMultisampled = new ShadowingIntMap();
  let minorAlloc = 0, minorCollect = 0, promote = 0, majorAlloc = 0, majorCollect = 0;
  let dist4 = 0, dist16 = 0, dist256 = 0, szmax = 0;
  forEachView(reader, (ev) => {
    const t = ev.time;
    tmax = t;
    if (ev.kind === "alloc") {
      const n = ev.nsamples, length = ev.length;
      if (ev.source !== AllocationSource.Minor) {
        majorAlloc += n;
        if (n > 1) majorLiveMultisampled.add(ev.objId, n);
      } else {
        minorAlloc += n;
        minorLive.add(ev.objId, n);
      }
      if (length <= 4) dist4 += n;
      if (length <= 16) dist16 += n;
      if (length <= 256) dist256 += n;
      if (length > szmax) szmax = length;
    } else if (ev.kind === "promote") {
      const n = minorLive.take(ev.objId);
      if (n === undefined) {
        throw new TraceToolError(
          "identify",
          `object ${ev.objId} is promoted at ${t} µs but is not a live minor-heap allocation`,
          reader.fileName,
          reader.eventOffset(),
        );
      }
      promote += n;
      if (n > 1) majorLiveMultisampled.add(ev.objId, n);
    } else {
      const minor = minorLive.take(ev.objId);
      if (minor !== undefined) minorCollect += minor;
      else majorCollect += majorLiveMultisampled.take(ev.objId) ?? 1;
    }
  }, { parseBacktraces: false });

  // The arithmetic below is identify's, operation for operation (same IEEE results).
  const duration = tmax * 1e-6;
  const bytesPerWord = Math.trunc(info.wordSize / 8);
  const bytes = (nsamples: number) => nsamples / info.sampleRate * bytesPerWord;
  const minorA = bytes(minorAlloc);
  const promoted = bytes(promote);
  const majorA = bytes(majorAlloc);
  const majorC = bytes(majorCollect);
  const totalAlloc = minorA + majorA;
  const d4 = bytes(dist4), d16 = bytes(dist16), d256 = bytes(dist256);
  out.push(
    `   Minor: ${printBytes(minorA / duration)}/s allocations, ` +
      `${printfF(100 * promoted / minorA, 1)}% promoted\n`,
    `   Major: ${printBytes((majorA + promoted) / duration)}/s allocations ` +
      `(${printBytes(majorA / duration)}/s direct), ${
        printBytes(majorC / duration)
      }/s collections\n`,
    `   Sizes (by word): ${printfF(100 * d4 / totalAlloc, 0)}% <= 4w, ` +
      `${printfF(100 * d16 / totalAlloc, 0)}% <= 16w, ${printfF(100 * d256 / totalAlloc, 0)}% ` +
      `<= 256w. Max: ${printBytes(intMulDiv8(szmax, info.wordSize))}\n`,
    `   Runtime: ${printfF(duration, 3)} s\n`,
  );
  return out.join("");
}
