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
 * plain Maps stand in for its `Hashtbl`s.
 * @module
 */
import type { TraceInput } from "./input.ts";
import { locationLookup } from "./_lookup.ts";
import { compareOCamlStrings } from "./_strings.ts";

interface Node {
  samples: number;
  children: Map<string, Node>;
}

function newNode(): Node {
  return { samples: 0, children: new Map() };
}

/** The folded stacks of every allocation of `reader`'s trace, as memtrace's `flamegraph` prints
 * them (newline-terminated lines; empty when no path has two names or more). */
export function flamegraph(reader: TraceInput): string {
  const root = newNode();
  const lookup = locationLookup(reader);
  const seen = new Set<string>();
  reader.iter((_time, ev) => {
    if (ev.kind !== "alloc") return;
    seen.clear();
    let node = root;
    const buf = ev.backtraceBuffer;
    for (let i = 0; i < ev.backtraceLength; i++) {
      for (const loc of lookup(buf[i])) {
        const name = loc.defname;
        if (seen.has(name)) continue;
        seen.add(name);
        let child = node.children.get(name);
        if (child === undefined) {
          child = newNode();
          node.children.set(name, child);
        }
        node = child;
      }
    }
    node.samples += ev.nsamples;
  });
  const out: string[] = [];
  const path: string[] = [];
  const dump = (node: Node): void => {
    if (node.samples > 0 && path.length >= 2) out.push(`${path.join(";")} ${node.samples}\n`);
    const names = [...node.children.keys()].sort(compareOCamlStrings);
    for (const name of names) {
      path.push(name);
      dump(node.children.get(name)!);
      path.pop();
    }
  };
  dump(root);
  return out.join("");
}
