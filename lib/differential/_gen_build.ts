/**
 * A generated program (\_gen_program.ts) made into a scenario through the builder, and written
 * out as the scenario module that makes the same scenario: both walk the program form once, step
 * by step, so that a module written for a difference reproduces exactly what was run.
 * @module
 */
import {
  act,
  type CallbackAction,
  type CallbackBuilder,
  cb,
  type DomainBuilder,
  keep,
  type Lifetime,
  type LoopIndex,
  type Scenario,
  scenario,
  type ScenarioBuilder,
  sizes,
  type SizeSpec,
  type ThreadBuilder,
} from "../scenario/mod.ts";
import {
  CALLBACK_KINDS,
  type GenCallback,
  type GenProfile,
  type GenProgram,
  type GenStep,
} from "./_gen_program.ts";

// ---- building ----------------------------------------------------------------------------------

/** The scenario `p` describes, named `name`. Throws the builder's `ScenarioError` when `p` is not
 * a valid scenario. */
export function buildGenScenario(p: GenProgram, name: string): Scenario {
  return scenario(settingsOf(p, name), (s) => {
    const threads = new Map<string, ThreadBuilder | DomainBuilder>();
    runSteps(s, s.main, p.steps, [], threads);
  });
}

function settingsOf(p: GenProgram, name: string) {
  return { name, seed: p.seed, minorHeapWords: p.minorHeapWords };
}

function runSteps(
  s: ScenarioBuilder,
  d: DomainBuilder,
  list: readonly GenStep[],
  loops: readonly LoopIndex[],
  threads: Map<string, ThreadBuilder | DomainBuilder>,
): void {
  for (const st of list) {
    switch (st.k) {
      case "alloc":
        d.alloc(sizeValue(st.size), {
          source: st.source,
          lifetime: lifetimeValue(st.lifetime),
          ...(st.at !== undefined ? { at: st.at } : {}),
          ...(st.customMem !== undefined ? { customMem: sizeValue(st.customMem) } : {}),
        });
        break;
      case "combined":
        d.allocCombined([...st.sizes], {
          lifetime: st.lifetimes.map(lifetimeValue),
          ...(st.at !== undefined ? { at: st.at } : {}),
        });
        break;
      case "unmarshal":
        d.unmarshal([...st.blocks], {
          lifetime: lifetimeValue(st.lifetime),
          ...(st.at !== undefined ? { at: st.at } : {}),
        });
        break;
      case "ext":
        d.extAlloc(sizeValue(st.bytes), lifetimeValue(st.lifetime));
        break;
      case "gc":
        gcCall(d, st.what);
        break;
      case "poll":
        d.poll();
        break;
      case "repeat":
        d.repeat(st.count, (i) => runSteps(s, d, st.body, [...loops, i], threads));
        break;
      case "every":
        loops[loops.length - 1].every(
          st.period,
          () => runSteps(s, d, st.body, loops, threads),
          st.offset,
        );
        break;
      case "call":
        d.call(st.frame, () => runSteps(s, d, st.body, loops, threads));
        break;
      case "attempt":
        d.attempt(() => runSteps(s, d, st.body, loops, threads));
        break;
      case "userEvent":
        d.userEvent(st.name, st.event);
        break;
      case "release":
        s.release(st.name);
        break;
      case "start":
        d.memprof.start(profileValue(st.profile));
        break;
      case "stop":
        d.memprof.stop();
        break;
      case "discard":
        d.memprof.discard(st.profile);
        break;
      case "events":
        s.events[st.what]();
        break;
      case "spawn": {
        const child = d.spawn(st.name);
        // Its threads pass the baton back to it by its name.
        threads.set(st.name, child);
        runSteps(s, child, st.body, [], threads);
        if (st.end === "terminate") child.terminate();
        else d.join(child);
        break;
      }
      case "thread":
        threads.set(st.name, d.thread(st.name, (t) => runSteps(s, t, st.body, [], threads)));
        break;
      case "yieldTo":
        d.yieldTo(st.thread === "main" ? s.main : threads.get(st.thread)!);
        break;
      case "joinThread":
        d.join(threads.get(st.thread)!);
        break;
      case "threadYield":
        d.yield();
        break;
    }
  }
}

function gcCall(d: DomainBuilder, what: string): void {
  switch (what) {
    case "minor":
      d.minorGc();
      break;
    case "majorSlice":
      d.majorSlice();
      break;
    case "major":
      d.majorGc();
      break;
    case "fullMajor":
      d.fullMajor();
      break;
    case "compact":
      d.compact();
      break;
  }
}

function sizeValue(s: SizeSpec): SizeSpec {
  if (typeof s === "number") return s;
  if ("uniform" in s) return sizes.uniform(s.uniform[0], s.uniform[1]);
  if ("choice" in s) return sizes.choice(...s.choice);
  return sizes.geometric(s.geometric.mean, s.geometric.max);
}

function lifetimeValue(l: Lifetime): Lifetime {
  switch (l.kind) {
    case "drop":
      return keep.drop;
    case "forever":
      return keep.forever;
    case "steps":
      return keep.steps(l.steps, l.until);
    case "until":
      return keep.until(l.name);
    case "list":
      return keep.list(l.name);
    case "ring":
      return keep.ring(l.slots, l.name);
    case "cycle":
      return keep.cycle(...l.lifetimes.map(lifetimeValue));
  }
}

function actionValue(a: CallbackAction): CallbackAction {
  switch (a.kind) {
    case "raise":
      return act.raise(a.exn);
    case "stop":
      return act.stop();
    case "discard":
      return act.discard();
    case "start":
      return act.start(profileValue(a.profile as GenProfile));
    case "alloc":
      return act.alloc(a.words, lifetimeValue(a.lifetime));
    case "gc":
      return act.gc(a.what);
    case "yieldToNext":
      return act.yieldToNext(a.threads);
    default:
      throw new Error(`generated programs have no ${a.kind} action`);
  }
}

function callbackValue(c: GenCallback): CallbackBuilder {
  let b = c.result === "track" ? cb.track() : cb.none();
  for (const { when, action } of c.actions) {
    const a = actionValue(action);
    b = when.kind === "nth"
      ? b.on(when.n, a)
      : when.kind === "every"
      ? b.every(when.period, a, when.offset)
      : b.always(a);
  }
  return b;
}

function profileValue(p: GenProfile) {
  const tracker: Record<string, CallbackBuilder> = {};
  for (const k of CALLBACK_KINDS) {
    const c = p.tracker[k];
    if (c !== undefined) tracker[k] = callbackValue(c);
  }
  return {
    name: p.name,
    samplingRate: p.samplingRate,
    callstackSize: p.callstackSize,
    tracker,
  };
}

// ---- writing the module ------------------------------------------------------------------------

/** Options of {@linkcode emitGenModule}. */
export interface EmitOptions {
  /** The import specifier of lib/scenario/mod.ts from the module's folder. */
  readonly scenarioModule: string;
  /** Lines of comment to put at the top (what found it, how to run it). */
  readonly header?: readonly string[];
}

/** The source of a scenario module whose default export is the scenario `p` makes, named
 * `name` (the same builder calls {@linkcode buildGenScenario} makes). */
export function emitGenModule(p: GenProgram, name: string, opts: EmitOptions): string {
  const out: string[] = [];
  for (const h of opts.header ?? []) out.push(`// ${h}`);
  out.push(
    `import { act, cb, keep, scenario, sizes } from ${JSON.stringify(opts.scenarioModule)};`,
    "",
    `export default scenario(${
      JSON.stringify(settingsOf(p, name)).replaceAll(",", ", ")
    }, (s) => {`,
    "  const m = s.main;",
  );
  const e = new Emitter(out);
  e.steps("m", p.steps, [], 1);
  out.push("});", "");
  // Keep the unused-import lint quiet for programs that use only some of the helpers.
  return out.join("\n").replace(
    /^import \{ act, cb, keep, scenario, sizes \}/m,
    () => `import { ${usedHelpers(out.join("\n")).join(", ")} }`,
  );
}

function usedHelpers(text: string): string[] {
  const body = text.slice(text.indexOf("export default"));
  return ["act", "cb", "keep", "scenario", "sizes"].filter((h) =>
    new RegExp(`\\b${h}[.(]`).test(body)
  );
}

class Emitter {
  #out: string[];
  #threads = 0;
  constructor(out: string[]) {
    this.#out = out;
  }

  #line(indent: number, text: string): void {
    this.#out.push("  ".repeat(indent) + text);
  }

  steps(d: string, list: readonly GenStep[], loops: readonly string[], indent: number): void {
    for (const st of list) this.step(d, st, loops, indent);
  }

  step(d: string, st: GenStep, loops: readonly string[], indent: number): void {
    const opts = (fields: [string, string | undefined][]): string => {
      const kept = fields.filter(([, v]) => v !== undefined);
      return kept.length === 0 ? "" : `, { ${kept.map(([k, v]) => `${k}: ${v}`).join(", ")} }`;
    };
    const at = "at" in st && st.at !== undefined ? JSON.stringify(st.at) : undefined;
    switch (st.k) {
      case "alloc":
        this.#line(
          indent,
          `${d}.alloc(${sizeCode(st.size)}${
            opts([
              ["source", st.source === "caml" ? undefined : JSON.stringify(st.source)],
              ["lifetime", st.lifetime.kind === "drop" ? undefined : lifetimeCode(st.lifetime)],
              ["at", at],
              ["customMem", st.customMem === undefined ? undefined : sizeCode(st.customMem)],
            ])
          });`,
        );
        break;
      case "combined":
        this.#line(
          indent,
          `${d}.allocCombined([${st.sizes.join(", ")}]${
            opts([
              ["lifetime", `[${st.lifetimes.map(lifetimeCode).join(", ")}]`],
              ["at", at],
            ])
          });`,
        );
        break;
      case "unmarshal":
        this.#line(
          indent,
          `${d}.unmarshal([${st.blocks.join(", ")}]${
            opts([
              ["lifetime", st.lifetime.kind === "drop" ? undefined : lifetimeCode(st.lifetime)],
              ["at", at],
            ])
          });`,
        );
        break;
      case "ext":
        this.#line(
          indent,
          `${d}.extAlloc(${sizeCode(st.bytes)}${
            st.lifetime.kind === "drop" ? "" : `, ${lifetimeCode(st.lifetime)}`
          });`,
        );
        break;
      case "gc":
        this.#line(indent, `${d}.${GC_METHOD[st.what]}();`);
        break;
      case "poll":
        this.#line(indent, `${d}.poll();`);
        break;
      case "repeat": {
        const i = `i${loops.length + 1}`;
        const uses = usesIndex(st.body);
        this.#line(indent, `${d}.repeat(${st.count}, (${uses ? i : ""}) => {`);
        this.steps(d, st.body, [...loops, i], indent + 1);
        this.#line(indent, "});");
        break;
      }
      case "every":
        this.#line(indent, `${loops[loops.length - 1]}.every(${st.period}, () => {`);
        this.steps(d, st.body, loops, indent + 1);
        this.#line(indent, `}, ${st.offset});`);
        break;
      case "call":
        this.#line(indent, `${d}.call(${JSON.stringify(st.frame)}, () => {`);
        this.steps(d, st.body, loops, indent + 1);
        this.#line(indent, "});");
        break;
      case "attempt":
        this.#line(indent, `${d}.attempt(() => {`);
        this.steps(d, st.body, loops, indent + 1);
        this.#line(indent, "});");
        break;
      case "userEvent":
        this.#line(
          indent,
          `${d}.userEvent(${JSON.stringify(st.name)}, ${JSON.stringify(st.event)});`,
        );
        break;
      case "release":
        this.#line(indent, `s.release(${JSON.stringify(st.name)});`);
        break;
      case "start":
        this.#line(indent, `${d}.memprof.start(${profileCode(st.profile, indent)});`);
        break;
      case "stop":
        this.#line(indent, `${d}.memprof.stop();`);
        break;
      case "discard":
        this.#line(indent, `${d}.memprof.discard(${JSON.stringify(st.profile)});`);
        break;
      case "events":
        this.#line(indent, `s.events.${st.what}();`);
        break;
      case "spawn": {
        const w = st.name;
        this.#line(indent, `const ${w} = ${d}.spawn(${JSON.stringify(st.name)});`);
        this.steps(w, st.body, [], indent);
        this.#line(indent, st.end === "terminate" ? `${w}.terminate();` : `${d}.join(${w});`);
        break;
      }
      case "thread": {
        const t = `th${++this.#threads}`;
        this.#line(
          indent,
          `const ${st.name} = ${d}.thread(${JSON.stringify(st.name)}, (${t}) => {`,
        );
        this.steps(t, st.body, [], indent + 1);
        this.#line(indent, "});");
        break;
      }
      case "yieldTo":
        this.#line(indent, `${d}.yieldTo(${st.thread === "main" ? "m" : st.thread});`);
        break;
      case "joinThread":
        this.#line(indent, `${d}.join(${st.thread});`);
        break;
      case "threadYield":
        this.#line(indent, `${d}.yield();`);
        break;
    }
  }
}

/** Whether an \`every\` in \`body\` (outside nested loops) uses the enclosing loop's index. */
function usesIndex(body: readonly GenStep[]): boolean {
  return body.some((b) =>
    b.k === "every" || (b.k !== "repeat" && "body" in b && usesIndex(b.body))
  );
}

const GC_METHOD: Record<string, string> = {
  minor: "minorGc",
  majorSlice: "majorSlice",
  major: "majorGc",
  fullMajor: "fullMajor",
  compact: "compact",
};

function sizeCode(s: SizeSpec): string {
  if (typeof s === "number") return `${s}`;
  if ("uniform" in s) return `sizes.uniform(${s.uniform[0]}, ${s.uniform[1]})`;
  if ("choice" in s) return `sizes.choice(${s.choice.join(", ")})`;
  const g = s.geometric;
  return g.max === undefined
    ? `sizes.geometric(${g.mean})`
    : `sizes.geometric(${g.mean}, ${g.max})`;
}

function lifetimeCode(l: Lifetime): string {
  switch (l.kind) {
    case "drop":
      return "keep.drop";
    case "forever":
      return "keep.forever";
    case "steps":
      return l.until === undefined
        ? `keep.steps(${l.steps})`
        : `keep.steps(${l.steps}, ${JSON.stringify(l.until)})`;
    case "until":
      return `keep.until(${JSON.stringify(l.name)})`;
    case "list":
      return `keep.list(${JSON.stringify(l.name)})`;
    case "ring":
      return l.name === undefined
        ? `keep.ring(${l.slots})`
        : `keep.ring(${l.slots}, ${JSON.stringify(l.name)})`;
    case "cycle":
      return `keep.cycle(${l.lifetimes.map(lifetimeCode).join(", ")})`;
  }
}

function actionCode(a: CallbackAction, indent: number): string {
  switch (a.kind) {
    case "raise":
      return `act.raise(${JSON.stringify(a.exn)})`;
    case "stop":
      return "act.stop()";
    case "discard":
      return "act.discard()";
    case "start":
      return `act.start(${profileCode(a.profile as GenProfile, indent)})`;
    case "alloc":
      return a.lifetime.kind === "drop"
        ? `act.alloc(${a.words})`
        : `act.alloc(${a.words}, ${lifetimeCode(a.lifetime)})`;
    case "gc":
      return `act.gc(${JSON.stringify(a.what)})`;
    case "yieldToNext":
      return `act.yieldToNext(${JSON.stringify(a.threads)})`;
    default:
      throw new Error(`generated programs have no ${a.kind} action`);
  }
}

function callbackCode(c: GenCallback, indent: number): string {
  let code = c.result === "track" ? "cb.track()" : "cb.none()";
  for (const { when, action } of c.actions) {
    const a = actionCode(action, indent);
    code += when.kind === "nth"
      ? `.on(${when.n}, ${a})`
      : when.kind === "every"
      ? `.every(${when.period}, ${a}, ${when.offset})`
      : `.always(${a})`;
  }
  return code;
}

function profileCode(p: GenProfile, indent: number): string {
  const pad = "  ".repeat(indent + 1);
  const entries = CALLBACK_KINDS.filter((k) => p.tracker[k] !== undefined).map((k) =>
    `${pad}  ${k}: ${callbackCode(p.tracker[k]!, indent + 1)},`
  );
  const tracker = entries.length === 0 ? "{}" : `{\n${entries.join("\n")}\n${pad}}`;
  return `{\n${pad}name: ${JSON.stringify(p.name)},\n${pad}samplingRate: ${p.samplingRate},\n` +
    `${pad}callstackSize: ${p.callstackSize},\n${pad}tracker: ${tracker},\n${"  ".repeat(indent)}}`;
}
