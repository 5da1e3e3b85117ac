// Fixture access for the memtrace_tools tests: every file read here is inside the repository.
import assert from "node:assert/strict";
import { MemorySink, Reader } from "../../lib/memtrace/mod.ts";
import { flamegraph, hotspots, identify } from "../../lib/memtrace_tools/mod.ts";

const FIXTURES = new URL("../fixtures/", import.meta.url);

/** tests/fixtures/memtrace/ (the input traces). */
export const TRACES: URL = new URL("memtrace/", FIXTURES);
/** tests/fixtures/memtrace-tools/ (memtrace's tools' outputs). */
export const REFS: URL = new URL("memtrace-tools/", FIXTURES);
/** tests/fixtures/memtrace-tools/extra/. */
export const EXTRA: URL = new URL("memtrace-tools/extra/", FIXTURES);

/** The bytes of `name` in folder `dir`. */
export function bytes(dir: URL, name: string): Uint8Array {
  return Deno.readFileSync(new URL(name, dir));
}

/** The text of `name` in folder `dir`. */
export function text(dir: URL, name: string): string {
  return Deno.readTextFileSync(new URL(name, dir));
}

/** Whether `name` exists in folder `dir`. */
export function exists(dir: URL, name: string): boolean {
  try {
    Deno.statSync(new URL(name, dir));
    return true;
  } catch {
    return false;
  }
}

/** A reader over bytes, named (for error messages) `name`. Warnings are collected, not printed. */
export function readerOf(data: Uint8Array, name: string, warnings: string[] = []): Reader {
  return Reader.fromBytes(data, { name, onWarning: (m) => warnings.push(m) });
}

/** Runs `f` on a reader of `data` and closes it. */
export function withReader<T>(data: Uint8Array, name: string, f: (r: Reader) => T): T {
  const r = readerOf(data, name);
  try {
    return f(r);
  } finally {
    r.close();
  }
}

/** Runs a trace writer into memory and returns a copy of the bytes. */
export function written(f: (sink: MemorySink) => void): Uint8Array {
  const sink = new MemorySink();
  f(sink);
  return sink.bytes().slice();
}

/** First differing line of two texts, for readable failures. */
export function firstDifference(got: string, want: string): string {
  const g = got.split("\n"), w = want.split("\n");
  for (let i = 0; i < Math.max(g.length, w.length); i++) {
    if (g[i] !== w[i]) return `line ${i + 1}:\n  got:  ${g[i]}\n  want: ${w[i]}`;
  }
  return "identical";
}

/** Index of the first differing byte, or -1 when equal. */
export function firstByteDifference(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

/** The tools that print a text. */
export type TextTool = "flamegraph" | "hotspots" | "identify";
/** Every {@linkcode TextTool}. */
export const TEXT_TOOLS: TextTool[] = ["flamegraph", "hotspots", "identify"];

/** What text tool `tool` prints for reader `r` of file `fileName`. */
export function runTextTool(tool: TextTool, r: Reader, fileName: string): string {
  if (tool === "flamegraph") return flamegraph(r);
  if (tool === "hotspots") return hotspots(r);
  return identify(r, { name: fileName });
}

/** Asserts that our tool printed what memtrace's did, showing the first differing line. */
export function assertSameText(got: string, want: string, what: string): void {
  assert.ok(got === want, `${what} differs from memtrace's, ${firstDifference(got, want)}`);
}

/** Asserts that our tool wrote what memtrace's did, showing the first differing byte. */
export function assertSameBytes(got: Uint8Array, want: Uint8Array, what: string): void {
  const at = firstByteDifference(got, want);
  assert.equal(at, -1, `${what}: first difference at byte ${at} (${got.length} vs ${want.length})`);
}
