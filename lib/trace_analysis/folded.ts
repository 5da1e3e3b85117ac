/**
 * Folded stacks (Brendan Gregg's `stackcollapse` format, read by flamegraph.pl, speedscope and
 * others): one line per function path, `outer;…;inner <bytes>`, weighted by estimated bytes.
 * @module
 */
import { bytesPerSample, flameWeights, NO_LOCATION, selectSamples } from "./select.ts";
import type { ProfileData, Selector } from "./profile.ts";

/** Function ids along a function-path node, outermost first. */
export function functionPath(data: ProfileData, fnode: number): number[] {
  const path: number[] = [];
  for (let f = fnode; f >= 0; f = data.fnodes.parent[f]) path.push(data.fnodes.fn[f]);
  return path.reverse();
}

/**
 * The folded stacks of a selection: allocated bytes when `selector.live` is `alloc`, otherwise
 * the bytes live at the selector's time. Adjacent frames of one function are one frame; stacks
 * with no known location fold into `(no location)`. Weights are rounded to whole bytes; lines
 * are sorted, so the output is deterministic.
 */
export function foldedStacks(data: ProfileData, selector: Selector): string[] {
  const sel = selectSamples(data, selector);
  const bps = bytesPerSample(data);
  const { self, rootTotal } = flameWeights(data, sel);
  const lines: [string, number][] = [];
  let placed = 0;
  for (let f = 0; f < self.length; f++) {
    if (self[f] === 0) continue;
    placed += self[f];
    lines.push([functionPath(data, f).map((i) => data.functions[i]).join(";"), self[f]]);
  }
  if (rootTotal > placed) lines.push([NO_LOCATION, rootTotal - placed]);
  lines.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  return lines.map(([path, samples]) => `${path} ${Math.round(samples * bps)}`);
}
