/**
 * Interning of backtraces while a trace streams by: location codes become locations, paths of
 * locations become nodes of a tree (parents before children). Each backtrace costs
 * only its frames not shared with the previous backtrace of its domain (the trace's common
 * prefix); no memory is allocated per event.
 *
 * A location code standing for no location (memtrace prints it `$<code>`) contributes no frame,
 * as in memtrace's own flamegraph tool.
 * @module
 */
import type { TraceLocation } from "./source.ts";
import { GrowI32 } from "./_grow.ts";
import { KeyIndex } from "./_index.ts";
import { StackCache } from "./_stack_cache.ts";

interface DomainPath {
  /** `nodes[i]`: the node after the backtrace's first i+1 codes. */
  nodes: Int32Array;
  /** `hashes[i]`: the hash of the backtrace's first i+1 codes. */
  hashes: Int32Array;
  len: number;
}

/** The frame tables of one aggregation. */
export class FrameTable {
  readonly functions: string[] = [];
  #fnIndex = new Map<string, number>();
  readonly files: string[] = [];
  #fileIndex = new Map<string, number>();
  readonly locFn = new GrowI32();
  readonly locFile = new GrowI32();
  readonly locLine = new GrowI32();
  readonly locStart = new GrowI32();
  readonly locEnd = new GrowI32();
  #locIndex = new Map<string, number>();
  /** Location ids of each code seen (outermost first). */
  #codeLocs = new Map<number, Int32Array>();

  readonly nodeParent = new GrowI32();
  readonly nodeLoc = new GrowI32();
  /** (node, location id) → child node. */
  #locChild = new KeyIndex();
  /** (node, code) → node reached through all the code's locations. */
  #codeChild = new KeyIndex();

  /** Whole backtraces seen, with their nodes (_stack_cache.ts). */
  #stacks = new StackCache();

  #domains = new Map<number, DomainPath>();
  /** The domain of the previous backtrace and its path (domains take turns in runs). */
  #lastDomain = NaN;
  #lastPath: DomainPath | undefined;
  readonly #lookup: (code: number) => readonly TraceLocation[];

  constructor(lookup: (code: number) => readonly TraceLocation[]) {
    this.#lookup = lookup;
  }

  /** The node of a backtrace (codes caller first in `buf[0, len)`), sharing its first `common`
   * codes with the previous backtrace of `domain`. −1 when it has no known location. */
  stackNode(domain: number, buf: Float64Array, len: number, common: number): number {
    let st = this.#lastPath;
    if (domain !== this.#lastDomain || st === undefined) {
      st = this.#domains.get(domain);
      if (st === undefined) {
        st = { nodes: new Int32Array(64), hashes: new Int32Array(64), len: 0 };
        this.#domains.set(domain, st);
      }
      this.#lastDomain = domain;
      this.#lastPath = st;
    }
    if (st.nodes.length < len) {
      const n = Math.max(len, 2 * st.nodes.length);
      const grown = new Int32Array(n), grownHashes = new Int32Array(n);
      grown.set(st.nodes.subarray(0, st.len));
      grownHashes.set(st.hashes.subarray(0, st.len));
      st.nodes = grown;
      st.hashes = grownHashes;
    }
    const start = common > 0 && common <= st.len ? common : 0;
    const nodes = st.nodes, hashes = st.hashes;
    st.len = len;
    // The hash of the whole backtrace, from that of its prefix shared with the previous one.
    let h = start > 0 ? hashes[start - 1] : 0x2545f491;
    for (let i = start; i < len; i++) hashes[i] = h = mixCode(h, buf[i]);
    const found = this.#stacks.find(buf, len, h);
    if (found >= 0) {
      const cached = this.#stacks.nodes;
      for (let i = start; i < len; i++) nodes[i] = cached[found + i];
      return len > 0 ? nodes[len - 1] : -1;
    }
    let node = start > 0 ? nodes[start - 1] : -1;
    const codeChild = this.#codeChild;
    for (let i = start; i < len; i++) {
      const code = buf[i];
      let next = codeChild.get(node, code, 0);
      if (next < 0) {
        next = this.#expand(node, code);
        codeChild.add(node, code, 0, next);
      }
      node = next;
      nodes[i] = node;
    }
    this.#stacks.add(buf, nodes, len, h);
    return node;
  }

  /** The node reached from `node` through every location of `code`. */
  #expand(node: number, code: number): number {
    let locs = this.#codeLocs.get(code);
    if (locs === undefined) {
      const list = this.#lookup(code);
      locs = new Int32Array(list.length);
      for (let j = 0; j < list.length; j++) locs[j] = this.#location(list[j]);
      this.#codeLocs.set(code, locs);
    }
    for (let j = 0; j < locs.length; j++) node = this.#childByLoc(node, locs[j]);
    return node;
  }

  #childByLoc(node: number, loc: number): number {
    let child = this.#locChild.get(node, loc, 0);
    if (child < 0) {
      child = this.nodeParent.push(node);
      this.nodeLoc.push(loc);
      this.#locChild.add(node, loc, 0, child);
    }
    return child;
  }

  #location(l: TraceLocation): number {
    const key =
      `${l.defname}\u0000${l.filename}\u0000${l.line}\u0000${l.startChar}\u0000${l.endChar}`;
    let id = this.#locIndex.get(key);
    if (id === undefined) {
      id = this.locFn.push(intern(this.functions, this.#fnIndex, l.defname));
      this.locFile.push(intern(this.files, this.#fileIndex, l.filename));
      this.locLine.push(l.line);
      this.locStart.push(l.startChar);
      this.locEnd.push(l.endChar);
      this.#locIndex.set(key, id);
    }
    return id;
  }
}

/** Mixes a location code (any number below 2^53: its low and high 32 bits) into hash `h`. */
function mixCode(h: number, k: number): number {
  h = Math.imul(h ^ (k | 0), 0x9e3779b1);
  h = Math.imul(h ^ ((k / 4294967296) | 0), 0x85ebca77);
  return h ^ (h >>> 15);
}

function intern(list: string[], index: Map<string, number>, s: string): number {
  let i = index.get(s);
  if (i === undefined) {
    i = list.length;
    list.push(s);
    index.set(s, i);
  }
  return i;
}
