/**
 * A pprof heap profile (profile.proto, gzipped) of a trace, written with the `pprof-format`
 * package. Sample types, as Go's heap profiles have them: `alloc_objects`, `alloc_space`,
 * `inuse_objects`, `inuse_space` — estimates scaled by 1 / sample rate. "In use" means live at
 * the trace end, or at the selector's live-at time.
 *
 * One pprof sample per class (stack, domain, source, size), its locations innermost first, with
 * labels `bytes` (the object's size, header excluded), `domain` and `source`. Space is samples ÷
 * rate × bytes per word; objects are samples ÷ (rate × words per object), words counting the
 * header for heap blocks (memprof samples the header too) and not for external allocations.
 * @module
 */
import { gzipSync } from "node:zlib";
import {
  Function as PprofFunction,
  Label,
  Line,
  Location as PprofLocation,
  Profile,
  Sample,
  StringTable,
  ValueType,
} from "pprof-format";
import { bytesPerSample, NO_LOCATION, selectionTotals, selectSamples } from "./select.ts";
import { checkConfidence, DEFAULT_CONFIDENCE, INTERVAL_METHOD } from "./intervals.ts";
import { intervalText } from "./top.ts";
import type { ProfileData, Selector } from "./profile.ts";
import { TraceAnalysisError } from "./errors.ts";

const SOURCE_NAMES = ["minor", "major", "external"];

/** The profile.proto message of a selection (not yet gzipped). */
/** Options of {@linkcode pprofOf} and {@linkcode speedscopeOf}. */
export interface ExportOptions {
  /** Confidence of the intervals in the metadata (default 0.95). */
  confidence?: number;
}

function pprofProfileOf(
  data: ProfileData,
  selector: Selector,
  options: ExportOptions,
): Profile {
  const c0 = data.classes;
  let grouped = false;
  for (let i = 0; c0.lengthMax !== undefined && i < c0.length.length && !grouped; i++) {
    grouped = c0.lengthMax[i] !== c0.length[i];
  }
  if (grouped) {
    throw new TraceAnalysisError(
      "lengths",
      'pprof gives each sample its exact length: aggregate with lengths: "exact"',
    );
  }
  const strings = new StringTable();
  const bps = bytesPerSample(data);
  const rate = data.info.sampleRate;
  const wordBytes = data.info.wordSize / 8;
  const alloc = selectSamples(data, { ...selector, live: "alloc" });
  const inuse = selectSamples(data, {
    ...selector,
    live: selector.live === "alloc" ? "end" : selector.live,
  });

  // Functions by (name, file); one pprof location per trace location.
  const functions: PprofFunction[] = [];
  const fnIds = new Map<string, number>();
  const functionId = (name: string, file: string, line: number) => {
    const key = `${name}\u0000${file}`;
    let id = fnIds.get(key);
    if (id === undefined) {
      id = functions.length + 1;
      functions.push(
        new PprofFunction({
          id,
          name: strings.dedup(name),
          systemName: strings.dedup(name),
          filename: strings.dedup(file),
          startLine: line,
        }),
      );
      fnIds.set(key, id);
    }
    return id;
  };
  const l = data.locations;
  const locations: PprofLocation[] = Array.from(l.fn, (fn, i) =>
    new PprofLocation({
      id: i + 1,
      line: [
        new Line({
          functionId: functionId(data.functions[fn], data.files[l.file[i]], l.line[i]),
          line: l.line[i],
          column: l.start[i],
        }),
      ],
    }));
  let noLocation = 0;

  const sampleType = (type: string, unit: string) =>
    new ValueType({ type: strings.dedup(type), unit: strings.dedup(unit) });
  const types = [
    sampleType("alloc_objects", "count"),
    sampleType("alloc_space", "bytes"),
    sampleType("inuse_objects", "count"),
    sampleType("inuse_space", "bytes"),
  ];
  const keyBytes = strings.dedup("bytes");
  const keyDomain = strings.dedup("domain");
  const keySource = strings.dedup("source");

  const samples: Sample[] = [];
  const c = data.classes;
  for (let i = 0; i < c.node.length; i++) {
    const a = alloc.samples[i], u = inuse.samples[i];
    if (a === 0 && u === 0) continue;
    const ids: number[] = [];
    for (let n = c.node[i]; n >= 0; n = data.nodes.parent[n]) ids.push(data.nodes.loc[n] + 1);
    if (ids.length === 0) {
      if (noLocation === 0) {
        noLocation = locations.length + 1;
        locations.push(
          new PprofLocation({
            id: noLocation,
            line: [new Line({ functionId: functionId(NO_LOCATION, "", 0), line: 0 })],
          }),
        );
      }
      ids.push(noLocation);
    }
    const words = Math.max(1, c.length[i] + (c.source[i] === 2 ? 0 : 1));
    const objects = (s: number) => (rate > 0 ? Math.round(s / (rate * words)) : 0);
    samples.push(
      new Sample({
        locationId: ids,
        value: [objects(a), Math.round(a * bps), objects(u), Math.round(u * bps)],
        label: [
          new Label({ key: keyBytes, num: c.length[i] * wordBytes, numUnit: keyBytes }),
          new Label({ key: keyDomain, num: c.domain[i] }),
          new Label({ key: keySource, str: strings.dedup(SOURCE_NAMES[c.source[i]] ?? "?") }),
        ],
      }),
    );
  }
  return new Profile({
    sampleType: types,
    sample: samples,
    location: locations,
    function: functions,
    stringTable: strings,
    timeNanos: BigInt(data.info.startTime) * 1000n,
    durationNanos: BigInt(data.stats.durationUs) * 1000n,
    periodType: sampleType("space", "bytes"),
    period: Math.round(bps),
    defaultSampleType: strings.dedup("alloc_space"),
    comment: [
      strings.dedup(`memtrace trace of ${data.info.executableName}`),
      strings.dedup(`sample rate ${data.info.sampleRate}, ${wordBytes}-byte words`),
      ...intervalComments(data, selector, options).map((c) => strings.dedup(c)),
    ],
  });
}

/** The comments giving the totals' confidence intervals (memprof's binomial model). */
function intervalComments(data: ProfileData, selector: Selector, options: ExportOptions): string[] {
  const confidence = checkConfidence(options.confidence ?? DEFAULT_CONFIDENCE);
  const alloc = selectionTotals(selectSamples(data, { ...selector, live: "alloc" })).samples;
  const live = selector.live === "alloc" ? "end" : selector.live;
  const inuse = selectionTotals(selectSamples(data, { ...selector, live })).samples;
  return [
    `alloc_space total: ${intervalText(data, alloc, confidence)}`,
    `inuse_space total: ${intervalText(data, inuse, confidence)}`,
    `intervals: ${INTERVAL_METHOD}`,
  ];
}

/** The gzipped profile.proto bytes of a selection (deterministic: no time in the gzip header);
 * its comments give the totals' confidence intervals. */
export function pprofOf(
  data: ProfileData,
  selector: Selector,
  options: ExportOptions = {},
): Uint8Array {
  return new Uint8Array(gzipSync(pprofProfileOf(data, selector, options).encode()));
}
