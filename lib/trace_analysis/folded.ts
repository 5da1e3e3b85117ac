/**
 * Folded stacks (Brendan Gregg's `stackcollapse` format, read by flamegraph.pl, speedscope and
 * others): one line per function path, `outer;…;inner <bytes>`, weighted by estimated bytes.
 *
 * What a trace's names could do to the format or to a terminal is escaped (lib/util's
 * `printable`): control characters and `;` become `\xNN`. A line holds at most
 * {@linkcode FOLDED_LINE_CHARS} characters of names: beyond, the outermost functions are left
 * out and counted by a first frame `(N outer frames)`. Lines are written one at a time, in the
 * order of their whole texts, never all built at once.
 * @module
 */
import {
  bytesPerSample,
  flameWeights,
  NO_LOCATION,
  pathOrder,
  selectSamples,
  STACK_TEXT_CHARS,
} from "./select.ts";
import type { ProfileData, Selector } from "./profile.ts";
import { printable } from "../util/printable.ts";

/** Most characters of names on one folded line (the weight aside): {@linkcode STACK_TEXT_CHARS}
 * (16,384), or the innermost name alone when it is longer. */
export const FOLDED_LINE_CHARS: number = STACK_TEXT_CHARS;

/** Function ids along a function-path node, outermost first. */
export function functionPath(data: ProfileData, fnode: number): number[] {
  const path: number[] = [];
  for (let f = fnode; f >= 0; f = data.fnodes.parent[f]) path.push(data.fnodes.fn[f]);
  return path.reverse();
}

/**
 * Writes the folded stacks of a selection, one line (without its newline) per call of `write`:
 * allocated bytes when `selector.live` is `alloc`, otherwise the bytes live at the selector's
 * time. Adjacent frames of one function are one frame; stacks with no known location fold into
 * `(no location)`. Weights are rounded to whole bytes. Lines come in the code-unit order of
 * their whole (escaped) paths, so the output is deterministic. Returns the number of lines.
 */
export function foldedStacksTo(
  data: ProfileData,
  selector: Selector,
  write: (line: string) => void,
): number {
  const sel = selectSamples(data, selector);
  const bps = bytesPerSample(data);
  const { self, rootTotal } = flameWeights(data, sel);
  const names = data.functions.map((s) => printable(s, { also: ";" }));
  const name = (fn: number) => names[fn];
  const fn = data.fnodes.fn;
  const ranks = pathOrder(data.fnodes.parent, (f) => fn[f], names, [NO_LOCATION]);
  const lines: number[] = [];
  let placed = 0;
  for (let f = 0; f < self.length; f++) {
    if (self[f] === 0) continue;
    placed += self[f];
    lines.push(f);
  }
  const noLocation = rootTotal > placed ? rootTotal - placed : 0;
  if (noLocation > 0) lines.push(-1);
  const rank = (f: number) => (f < 0 ? ranks.leaf[0] : ranks.node[f]);
  lines.sort((x, y) => rank(x) - rank(y));
  for (const f of lines) {
    if (f < 0) {
      write(`${NO_LOCATION} ${Math.round(noLocation * bps)}`);
      continue;
    }
    write(`${foldedPath(data, f, name)} ${Math.round(self[f] * bps)}`);
  }
  return lines.length;
}

/** A function path's names joined by `;`, within {@linkcode FOLDED_LINE_CHARS}. */
function foldedPath(data: ProfileData, fnode: number, name: (fn: number) => string): string {
  const parts: string[] = [];
  let chars = 0, f = fnode;
  for (; f >= 0; f = data.fnodes.parent[f]) {
    const text = name(data.fnodes.fn[f]);
    if (parts.length > 0 && chars + 1 + text.length > FOLDED_LINE_CHARS) break;
    chars += (parts.length > 0 ? 1 : 0) + text.length;
    parts.push(text);
  }
  let omitted = 0;
  for (; f >= 0; f = data.fnodes.parent[f]) omitted++;
  if (omitted > 0) parts.push(`(${omitted} outer frames)`);
  return parts.reverse().join(";");
}

/**
 * The folded stacks of a selection as an array of lines ({@linkcode foldedStacksTo}'s lines):
 * for profiles of modest size; a command writes them one at a time instead.
 */
export function foldedStacks(data: ProfileData, selector: Selector): string[] {
  const lines: string[] = [];
  foldedStacksTo(data, selector, (l) => lines.push(l));
  return lines;
}
