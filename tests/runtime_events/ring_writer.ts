/**
 * A stand-in for a running OCaml program, for the watch tests: run as a
 * subprocess, it writes runtime_events with memprof-lab's producer and
 * publishes them into `<dir>/<pid>.events` in place, in the order a real
 * runtime makes them visible: a ring's head is advanced before the data that
 * overwrites old messages is written, and the tail only after the new data.
 *
 * Usage: deno run --allow-read --allow-write ring_writer.ts CONFIG_JSON
 *
 * Each event is an int user event `seq` whose value is its sequence number
 * (ring = number mod maxDomains); every fifth one is wrapped in a `minor`
 * phase. At the end a report (`{written, tails, last}`) is written to
 * `report`, then the file is removed (`end: "remove"`, as OCaml does at exit)
 * or kept (`end: "keep"`, as with OCAML_RUNTIME_EVENTS_PRESERVE).
 *
 * @module
 */
import {
  eventsFilePath,
  RuntimeEventsProducer,
  RuntimePhase,
  Type,
} from "../../lib/runtime_events/mod.ts";

/** What the writer does. */
export interface WriterConfig {
  dir: string;
  maxDomains: number;
  logWsize: number;
  /** Events per batch and the pause after it (ms). */
  batches: { events: number; pauseMs: number }[];
  /** Delay before the file is created (ms). */
  startDelayMs?: number;
  end: "remove" | "keep";
  report: string;
}

/** The report written before the writer ends. */
export interface WriterReport {
  written: number;
  /** Final tail of each ring. */
  tails: number[];
  /** Last value written to each ring (-1 if none). */
  last: number[];
}

function writeAt(file: Deno.FsFile, offset: number, bytes: Uint8Array): void {
  file.seekSync(offset, Deno.SeekMode.Start);
  let off = 0;
  while (off < bytes.length) off += file.writeSync(bytes.subarray(off));
}

if (import.meta.main) {
  const cfg = JSON.parse(Deno.args[0]) as WriterConfig;
  let t = 0;
  const p = new RuntimeEventsProducer({
    maxDomains: cfg.maxDomains,
    logWsize: cfg.logWsize,
    pid: Deno.pid,
    clock: () => (t += 10),
  });
  const seq = p.registerUserEvent("seq", Type.int);
  p.start();
  if (cfg.startDelayMs) await new Promise((r) => setTimeout(r, cfg.startDelayMs));
  const path = eventsFilePath(cfg.dir, Deno.pid);
  // The file appears complete, as OCaml's (created, sized, then filled).
  Deno.writeFileSync(`${path}.tmp`, p.bytes);
  Deno.renameSync(`${path}.tmp`, path);
  const file = Deno.openSync(path, { write: true });
  const L = p.layout;
  const hdr = (d: number) => L.headersOffset + 80 * d;
  const publish = () => {
    const img = p.bytes;
    for (let d = 0; d < L.maxDomains; d++) writeAt(file, hdr(d), img.subarray(hdr(d), hdr(d) + 8));
    writeAt(file, L.dataOffset, img.subarray(L.dataOffset, L.customEventsOffset));
    for (let d = 0; d < L.maxDomains; d++) {
      writeAt(file, hdr(d) + 8, img.subarray(hdr(d) + 8, hdr(d) + 16));
    }
  };
  let n = 0;
  const last = new Array<number>(cfg.maxDomains).fill(-1);
  for (const b of cfg.batches) {
    for (let i = 0; i < b.events; i++, n++) {
      const d = n % cfg.maxDomains;
      if (n % 5 === 0) p.begin(d, RuntimePhase.EV_MINOR);
      p.writeUser(d, seq, n);
      if (n % 5 === 0) p.end(d, RuntimePhase.EV_MINOR);
      last[d] = n;
    }
    publish();
    if (b.pauseMs > 0) await new Promise((r) => setTimeout(r, b.pauseMs));
  }
  file.close();
  const report: WriterReport = {
    written: n,
    tails: Array.from({ length: cfg.maxDomains }, (_, d) => p.ringTail(d)),
    last,
  };
  Deno.writeTextFileSync(cfg.report, JSON.stringify(report));
  if (cfg.end === "remove") Deno.removeSync(path);
}
