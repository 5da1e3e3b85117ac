// An in-memory outside world for the `scenario` command: files and folders, consoles, modules,
// type checks and interrupts, so that the command runs in-process without permissions.
import { dirname, resolve } from "node:path";
import type { DirEntry, ScenarioCliIO } from "../../cli/scenario.ts";
import { goldens } from "../golden/index.ts";
import { GOLDEN_FILES } from "../../lib/scenario/golden.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The current folder of the stubbed command: modules given by relative path are there. */
export const CWD = "/home/u";

/** What `exit` throws in the stub (the process would end there). */
export class StubExit extends Error {
  /** Error class name. */
  override name = "StubExit";
  constructor(readonly status: number) {
    super(`exit ${status}`);
  }
}

/** Options of {@linkcode stub}. */
export interface StubOptions {
  /** Modules by the path given on the command line (a file is created for each). */
  modules?: Record<string, { default?: unknown } | (() => Promise<never>)>;
  /** Result of the type check of modules (default: they pass). */
  typeCheck?: { ok: boolean; output: string };
  /** Whether stderr is a terminal. */
  terminal?: boolean;
  /** Makes writing this file fail with this message (a full disk). */
  failWrite?: { path: string; message: string };
  /** Symbolic links, by absolute path: their absolute targets (only `realPath` follows them). */
  links?: Record<string, string>;
}

/** A stubbed outside world holding the real goldens under /golden. */
export function stub(opts: StubOptions = {}) {
  const files = new Map<string, Uint8Array>();
  const dirs = new Set<string>(["/"]);
  const handlers = new Set<(s: "SIGINT" | "SIGTERM") => void>();
  const alive = new Set<number>();
  const mkdirAll = (path: string) => {
    for (let p = path; !dirs.has(p); p = dirname(p)) dirs.add(p);
  };
  const put = (path: string, data: Uint8Array | string) => {
    if (!dirs.has(dirname(path))) throw new Deno.errors.NotFound(`no folder ${dirname(path)}`);
    files.set(path, typeof data === "string" ? encoder.encode(data) : data.slice());
  };
  const under = (path: string) => (p: string) => p === path || p.startsWith(path + "/");
  for (const [name, g] of Object.entries(goldens)) {
    mkdirAll(`/golden/${name}`);
    put(`/golden/${name}/${GOLDEN_FILES.ctf}`, g.ctf);
    put(`/golden/${name}/${GOLDEN_FILES.traceDump}`, g.traceDump);
    put(`/golden/${name}/${GOLDEN_FILES.eventsDump}`, g.eventsDump);
    put(`/golden/${name}/${GOLDEN_FILES.callbackLog}`, g.callbackLog);
  }
  for (const path of Object.keys(opts.modules ?? {})) {
    const abs = resolve(CWD, path);
    mkdirAll(dirname(abs));
    put(abs, "// stub module\n");
  }
  const io = {
    out: "",
    err: "",
    files,
    dirs,
    alive,
    typeChecked: [] as string[][],
    /** A signal to deliver at the next turn of the event loop. */
    pendingSignal: undefined as "SIGINT" | "SIGTERM" | undefined,
    /** Turns of the event loop so far (each file written yields once). */
    turns: 0,
    /** Deliver `pendingSignal` at this turn (counted from 1). */
    signalAtTurn: 0,
    text(path: string): string | undefined {
      const f = files.get(path);
      return f === undefined ? undefined : decoder.decode(f);
    },
    /** Every path under `path`, folders ending with `/`. */
    tree(path: string): string[] {
      return [
        ...[...dirs].filter((d) => d !== path && under(path)(d)).map((d) => d + "/"),
        ...[...files.keys()].filter(under(path)),
      ].sort();
    },
    stdout(t: string) {
      io.out += t;
    },
    stderr(t: string) {
      io.err += t;
    },
    isTerminal: () => opts.terminal ?? false,
    writeFileAtomic(path: string, data: Uint8Array | string) {
      put(path, data);
    },
    writeFile(path: string, data: Uint8Array | string) {
      if (opts.failWrite !== undefined && path.endsWith(opts.failWrite.path)) {
        throw new Error(opts.failWrite.message);
      }
      put(path, data);
    },
    mkdirAll,
    readFile: (path: string) => files.get(path),
    readDir(path: string): DirEntry[] | undefined {
      if (!dirs.has(path)) return undefined;
      const prefix = path === "/" ? "/" : path + "/";
      const child = (p: string) =>
        p.startsWith(prefix) && p !== path && !p.slice(prefix.length).includes("/");
      return [
        ...[...dirs].filter(child).map((d) => ({
          name: d.slice(prefix.length),
          isDirectory: true,
        })),
        ...[...files.keys()].filter(child).map((f) => ({
          name: f.slice(prefix.length),
          isDirectory: false,
        })),
      ];
    },
    kind(path: string): "file" | "directory" | undefined {
      return files.has(path) ? "file" : dirs.has(path) ? "directory" : undefined;
    },
    rename(from: string, to: string) {
      if (files.has(to) || dirs.has(to)) throw new Error(`rename: ${to} exists`);
      if (files.has(from)) {
        files.set(to, files.get(from)!);
        files.delete(from);
        return;
      }
      if (!dirs.has(from)) throw new Deno.errors.NotFound(`rename: no ${from}`);
      for (const d of [...dirs].filter(under(from))) {
        dirs.delete(d);
        dirs.add(to + d.slice(from.length));
      }
      for (const f of [...files.keys()].filter(under(from))) {
        files.set(to + f.slice(from.length), files.get(f)!);
        files.delete(f);
      }
    },
    removeAll(path: string) {
      for (const d of [...dirs].filter(under(path))) dirs.delete(d);
      for (const f of [...files.keys()].filter(under(path))) files.delete(f);
    },
    pid: 4000,
    processAlive: (pid: number): boolean => pid === 4000 || alive.has(pid),
    onInterrupt(handler: (s: "SIGINT" | "SIGTERM") => void) {
      handlers.add(handler);
      return () => void handlers.delete(handler);
    },
    exit(status: number): never {
      throw new StubExit(status);
    },
    nextTurn() {
      io.turns++;
      const signal = io.pendingSignal;
      if (signal !== undefined && io.turns === io.signalAtTurn) {
        io.pendingSignal = undefined;
        for (const h of handlers) h(signal);
      }
      return Promise.resolve();
    },
    cwd: () => CWD,
    importModule(path: string) {
      const m = opts.modules?.[path];
      if (typeof m === "function") return m();
      return m ? Promise.resolve(m) : Promise.reject(new Error(`Module not found "${path}"`));
    },
    typeCheck(paths: readonly string[]) {
      io.typeChecked.push([...paths]);
      return Promise.resolve(opts.typeCheck ?? { ok: true, output: "" });
    },
    goldenDir: "/golden",
    realPath(path: string): string {
      let p = resolve(CWD, path);
      for (let hops = 0; hops < 40; hops++) {
        const link = Object.keys(opts.links ?? {}).find((l) => p === l || p.startsWith(l + "/"));
        if (link === undefined) return p;
        p = resolve(opts.links![link], "." + p.slice(link.length));
      }
      throw new Error(`too many links at ${path}`);
    },
  } satisfies ScenarioCliIO & Record<string, unknown>;
  return io;
}
