/**
 * What a run gives once its steps ran: the memtrace trace, the runtime_events ring image, the
 * callback log, their text dumps (made when first read, or streamed), and the summary.
 * @module
 */
import { RuntimeEventsCursor } from "../../runtime_events/mod.ts";
import { dumpCallbacks } from "../../runtime_events/dump.ts";
import { dumpTrace, dumpTraceTo, Reader } from "../../memtrace/mod.ts";
import type { LogHeaderFacts } from "../callback_log.ts";
import type { RunResult, Summary, TextOutput } from "../result.ts";
import type { RunContext } from "./_context.ts";

/** The outputs of `run`, whose steps all ran (the tracer is closed here). */
export function runOutputs(run: RunContext): RunResult {
  run.tracer.close();
  run.progressDone();
  const ctf = run.traceSink.bytes().slice();
  // One read of the trace counts its events; its dump is made when asked for (writeText).
  const traceEvents = dumpTrace(Reader.fromBytes(ctf), () => {});
  // Without events.start() there is no ring file, as in OCaml without OCAML_RUNTIME_EVENTS_START.
  // The producer's image itself, not a copy: nothing writes to it after the run.
  const eventsImage = run.ring.started ? run.ring.bytes : new Uint8Array(0);
  if (run.ring.started) {
    new RuntimeEventsCursor(eventsImage).readPoll({
      lostEvents: (_d, words) => {
        run.counts.lostWords += words;
      },
    });
  }
  const log = run.log, facts = logFacts(run);
  const writeText = (output: TextOutput, write: (chunk: string) => void): void => {
    if (output === "callbackLog") return log.writeText(facts, write);
    if (output === "eventsDump") {
      if (eventsImage.length > 0) writeImageDump(eventsImage, write);
      return;
    }
    // As the lines joined with newlines, plus a final newline (one even without lines).
    let wrote = false;
    dumpTraceTo(Reader.fromBytes(ctf), (text) => {
      if (text.length > 0) wrote = true;
      write(text);
    });
    if (!wrote) write("\n");
  };
  const texts = new Map<TextOutput, string>();
  const text = (output: TextOutput): string => {
    let t = texts.get(output);
    if (t === undefined) {
      const parts: string[] = [];
      writeText(output, (chunk) => parts.push(chunk));
      texts.set(output, t = parts.join(""));
    }
    return t;
  };
  return {
    scenario: run.sc,
    ctf,
    get traceDump() {
      return text("traceDump");
    },
    eventsImage,
    get eventsDump() {
      return text("eventsDump");
    },
    get callbackLog() {
      return text("callbackLog");
    },
    writeText,
    racePoints: run.racePoints,
    gc: { ...run.rt.gcTotals },
    summary: summary(run, { traceEvents, traceBytes: ctf.length, ringBytes: eventsImage.length }),
  };
}

/** The counts the fixture log formats' header lines report. */
function logFacts(run: RunContext): LogHeaderFacts {
  return {
    samplingRate: run.traceRate,
    iterations: run.counts.mainLoop.count,
    loopDomain: run.counts.mainLoop.domain,
    minorsDuringLoop: run.counts.mainLoop.minors,
    minorsDuringProfile: run.rt.minorCollections - run.counts.minorsAtFirstStart,
  };
}

function summary(
  run: RunContext,
  sizes: { readonly traceEvents: number; readonly traceBytes: number; readonly ringBytes: number },
): Summary {
  const balance = [...run.names.profiles.values()].map((p) => ({
    profile: p.name,
    tracked: p.tracked,
    ended: p.ended,
    live: p.live.size,
    ok: p.tracked === p.ended + p.live.size,
  }));
  return {
    scenario: run.s.name,
    seed: run.seed,
    steps: run.step,
    allocations: run.counts.allocations,
    wordsAllocated: run.counts.words,
    minorCollections: run.rt.minorCollections,
    majorCycles: run.rt.majorCycles,
    callbacks: { ...run.counts.callbacks },
    samples: run.counts.samples,
    exceptions: run.counts.exceptions,
    balance,
    orphansAdopted: {
      tables: run.rt.memprofShared.stats.orphanTablesAdopted,
      entries: run.rt.memprofShared.stats.orphanEntriesAdopted,
    },
    trace: { events: sizes.traceEvents, bytes: sizes.traceBytes },
    ring: { bytes: sizes.ringBytes, lostWords: run.counts.lostWords },
    tracer: { ...run.tracer.stats },
  };
}

/** The `events dump` text of `image` (as `dumpImage` makes it) handed to `write` in chunks of
 * about 64 Ki characters. */
function writeImageDump(image: Uint8Array, write: (chunk: string) => void): void {
  let parts: string[] = [];
  let size = 0;
  new RuntimeEventsCursor(image).readAll(dumpCallbacks((line) => {
    parts.push(line, "\n");
    size += line.length + 1;
    if (size >= 1 << 16) {
      write(parts.join(""));
      parts = [];
      size = 0;
    }
  }));
  if (parts.length > 0) write(parts.join(""));
}
