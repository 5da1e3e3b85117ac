/**
 * memtrace's `flamegraph` tool (bin/flamegraph.ml): folded stacks, one line
 * `f1;f2;…;fn <samples>` per call path that allocated, for flamegraph.pl and similar.
 *
 * Each allocation's backtrace (caller first) becomes the list of its frames' function names —
 * every inlined location of a frame in turn — keeping only the first occurrence of each name
 * (memtrace removes adjacent repeats, then names already seen, which leaves exactly that). Its
 * samples are added to that path of a tree. The tree is printed depth first, children in
 * `String.compare` order; a node prints only if it has samples and a path of two names or more.
 *
 * memtrace's tool also keeps every live allocation in a table and asserts, at each collection,
 * that the object is in it: a trace collecting an object twice (or one never allocated) stops it
 * with `Assert_failure` and no output. Collections play no part in the output, so we skip that
 * bookkeeping and print the flame graph of such traces too.
 *
 * memtrace's tables here are looked up by name but never traversed (the output is sorted), so
 * our own tables stand in for its `Hashtbl`s: names are interned once per location code, the
 * tree's nodes are numbers, and the names already seen on a path are the names of the path's
 * nodes — so a backtrace's first `commonPrefix` codes, shared with the previous backtrace of its
 * domain, lead to the node reached then, and only the rest are walked.
 * @module
 */
import { forEachView, type TraceInput } from "./input.ts";
import { compareOCamlStrings } from "./_strings.ts";
import { printable } from "../util/printable.ts";
import { type Location, type LocationCode, locationLookup } from "../memtrace/mod.ts";

/** A domain's previous backtrace: `nodes[i]` is the node after its first i+1 codes. */
interface DomainPath {
  nodes: Int32Array;
  len: number;
}

/** The tree of name paths: node 0 is the root; a node's children by name id. */
class NameTree {
  /** Names by id, in order of first use. */
  readonly names: string[] = [];
  #nameIds = new Map<string, number>();
  /** Name ids of each location code seen. */
  #codeNames = new Map<number, Int32Array>();
  readonly parent: number[] = [-1];
  readonly name: number[] = [-1];
  readonly samples: number[] = [0];
  readonly children: Map<number, number>[] = [new Map()];
  /** Per name id: the last walk whose path holds the name. */
  #mark: number[] = [];
  #walk = 0;
  readonly #lookup: (code: LocationCode) => readonly Location[];

  constructor(lookup: (code: LocationCode) => readonly Location[]) {
    this.#lookup = lookup;
  }

  /** The name ids of `code`'s locations, outermost first. */
  namesOf(code: LocationCode): Int32Array {
    let ids = this.#codeNames.get(code);
    if (ids === undefined) {
      const locs = this.#lookup(code);
      ids = new Int32Array(locs.length);
      for (let j = 0; j < locs.length; j++) ids[j] = this.#intern(locs[j].defname);
      this.#codeNames.set(code, ids);
    }
    return ids;
  }

  /** Starts a walk from `node`: the names on its path count as seen. */
  begin(node: number): void {
    const walk = ++this.#walk;
    for (let n = node; n > 0; n = this.parent[n]) this.#mark[this.name[n]] = walk;
  }

  /** The node after `node` for the name ids of one code: each name not seen yet on the walk
   * leads to a child. */
  step(node: number, ids: Int32Array): number {
    const walk = this.#walk, mark = this.#mark;
    for (let j = 0; j < ids.length; j++) {
      const id = ids[j];
      if (mark[id] === walk) continue;
      mark[id] = walk;
      const kids = this.children[node];
      let child = kids.get(id);
      if (child === undefined) {
        child = this.parent.length;
        this.parent.push(node);
        this.name.push(id);
        this.samples.push(0);
        this.children.push(new Map());
        kids.set(id, child);
      }
      node = child;
    }
    return node;
  }

  #intern(name: string): number {
    let id = this.#nameIds.get(name);
    if (id === undefined) {
      id = this.names.length;
      this.names.push(name);
      this.#nameIds.set(name, id);
      this.#mark.push(0);
    }
    return id;
  }
}

/** The folded stacks of every allocation of `reader`'s trace, as memtrace's `flamegraph` prints
 * them (newline-terminated lines; empty when no path has two names or more). */
export function flamegraph(reader: TraceInput): string {
  const out: string[] = [];
  flamegraphTo(reader, (line) => out.push(line));
  return out.join("");
}

/** {@linkcode flamegraph}'s lines (each newline-terminated), handed to `write` one at a time:
 * the lines of a trace can add up to more than one string can hold. */
export function flamegraphTo(reader: TraceInput, write: (line: string) => void): void {
  const tree = new NameTree(locationLookup(reader));
  const domains = new Map<number, DomainPath>();
  forEachView(reader, (ev) => {
    if (ev.kind !== "alloc") return;
    let st = domains.get(ev.domain);
    if (st === undefined) {
      st = { nodes: new Int32Array(64), len: 0 };
      domains.set(ev.domain, st);
    }
    const len = ev.backtraceLength, buf = ev.backtraceBuffer;
    if (st.nodes.length < len) {
      const grown = new Int32Array(Math.max(len, 2 * st.nodes.length));
      grown.set(st.nodes.subarray(0, st.len));
      st.nodes = grown;
    }
    const common = ev.commonPrefix;
    let i = common > 0 && common <= st.len && common <= len ? common : 0;
    let node = i > 0 ? st.nodes[i - 1] : 0;
    tree.begin(node);
    const nodes = st.nodes;
    for (; i < len; i++) {
      node = tree.step(node, tree.namesOf(buf[i]));
      nodes[i] = node;
    }
    st.len = len;
    tree.samples[node] += ev.nsamples;
  });
  const { names, children, samples } = tree;
  // Ordered by the names as memtrace orders them; printed with control characters escaped.
  const byName = (x: number, y: number) => compareOCamlStrings(names[x], names[y]);
  const shown: (string | undefined)[] = [];
  // Depth first, children by name; iterative (a path may hold as many names as the trace has).
  const path: string[] = [];
  const stack: { ids: number[]; at: number; node: number }[] = [];
  const enter = (node: number) => {
    if (samples[node] > 0 && path.length >= 2) write(`${path.join(";")} ${samples[node]}\n`);
    stack.push({ ids: [...children[node].keys()].sort(byName), at: 0, node });
  };
  enter(0);
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    if (top.at === top.ids.length) {
      stack.pop();
      path.pop();
      continue;
    }
    const id = top.ids[top.at++];
    path.push(shown[id] ??= printable(names[id]));
    enter(children[top.node].get(id)!);
  }
}
