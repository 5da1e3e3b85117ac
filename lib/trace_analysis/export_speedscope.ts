/**
 * speedscope's JSON file format (https://www.speedscope.app/file-format-schema.json): two
 * sampled profiles over function paths, weighted in estimated bytes — allocated, and live at
 * the trace end (or the selector's live-at time).
 * @module
 */
import { bytesPerSample, flameWeights, NO_LOCATION, selectSamples } from "./select.ts";
import { functionPath } from "./folded.ts";
import type { ProfileData, Selector } from "./profile.ts";
import { checkConfidence, DEFAULT_CONFIDENCE } from "./intervals.ts";
import { intervalText } from "./top.ts";
import type { ExportOptions } from "./export_pprof.ts";

/** A frame of a speedscope file. */
export interface SpeedscopeFrame {
  /** Function name. */
  name: string;
  /** Source file. */
  file?: string;
  /** Line. */
  line?: number;
  /** Column. */
  col?: number;
}

/** A sampled profile of a speedscope file. */
export interface SpeedscopeSampledProfile {
  /** A sampled profile. */
  type: "sampled";
  /** Its name. */
  name: string;
  /** Unit of the weights. */
  unit: "bytes";
  /** Always 0. */
  startValue: number;
  /** Sum of the weights. */
  endValue: number;
  /** Stacks of frame indices, outermost first. */
  samples: number[][];
  /** Weight of each stack, in bytes. */
  weights: number[];
}

/** A speedscope file. */
export interface SpeedscopeFile {
  /** The schema's address. */
  $schema: "https://www.speedscope.app/file-format-schema.json";
  /** Frames shared by the profiles. */
  shared: { frames: SpeedscopeFrame[] };
  /** Allocated bytes, then live bytes. */
  profiles: SpeedscopeSampledProfile[];
  /** The executable's name. */
  name: string;
  /** The profile shown first. */
  activeProfileIndex: number;
  /** What wrote the file. */
  exporter: string;
}

/** The speedscope file of a selection (its `live` field picks the second profile's time). */
export function speedscopeOf(
  data: ProfileData,
  selector: Selector,
  options: ExportOptions = {},
): SpeedscopeFile {
  const confidence = checkConfidence(options.confidence ?? DEFAULT_CONFIDENCE);
  const bps = bytesPerSample(data);
  const frames: SpeedscopeFrame[] = data.functions.map((name) => ({ name }));
  // A function's file and line: those of its first location.
  for (let l = data.locations.fn.length - 1; l >= 0; l--) {
    const f = frames[data.locations.fn[l]];
    f.file = data.files[data.locations.file[l]];
    f.line = data.locations.line[l];
  }
  let noLocation = -1;
  const profile = (name: string, sel: Selector): SpeedscopeSampledProfile => {
    const { self, rootTotal } = flameWeights(data, selectSamples(data, sel));
    const samples: number[][] = [], weights: number[] = [];
    let placed = 0;
    for (let f = 0; f < self.length; f++) {
      if (self[f] === 0) continue;
      placed += self[f];
      samples.push(functionPath(data, f));
      weights.push(self[f] * bps);
    }
    if (rootTotal > placed) {
      if (noLocation < 0) noLocation = frames.push({ name: NO_LOCATION }) - 1;
      samples.push([noLocation]);
      weights.push((rootTotal - placed) * bps);
    }
    return {
      type: "sampled",
      // The total's confidence interval in the name (the file format has no other place).
      name: `${name} (${intervalText(data, rootTotal, confidence)})`,
      unit: "bytes",
      startValue: 0,
      endValue: rootTotal * bps,
      samples,
      weights,
    };
  };
  const live = selector.live === "alloc" ? "end" : selector.live;
  const liveName = live === "end"
    ? "live at end"
    : live === "peak"
    ? "live at peak"
    : live === "exact"
    ? `live at ${(data.liveAt?.timeUs ?? 0) / 1e6} s`
    : "live";
  const exe = data.info.executableName;
  return {
    $schema: "https://www.speedscope.app/file-format-schema.json",
    shared: { frames },
    profiles: [
      profile(`${exe}: allocated bytes`, { ...selector, live: "alloc" }),
      profile(`${exe}: ${liveName} bytes`, { ...selector, live }),
    ],
    name: exe,
    activeProfileIndex: 0,
    exporter: "memprof-lab trace export",
  };
}
