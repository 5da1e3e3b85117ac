/**
 * A strict structural check of Chrome trace-event JSON, written for the tests
 * from the trace-event format's rules (and what Perfetto and speedscope
 * require), independently of the exporter:
 *
 * - the text parses with `JSON.parse`; the top level is `{traceEvents: [...]}`;
 * - every event has `ph`, `ts` (a finite number), integer `pid` and `tid`, a
 *   non-empty `name`; `ph` is one of X B E i C M;
 * - `X` has `dur >= 0`; `i` has scope `t`, `p` or `g`; `C` has an `args`
 *   object of numbers; `M` is a known metadata name with its argument;
 * - on each track (pid, tid), timestamps never decrease in file order;
 * - each `E` closes the innermost open `B` of the same track and name, and
 *   every `B` is closed;
 * - the spans of a track (`X` intervals and `B`–`E` pairs) nest: two spans
 *   are either disjoint (touching allowed) or one contains the other.
 *
 * Times are compared as integer nanoseconds, read exactly from the JSON text
 * of `ts` and `dur` (the exporter's microseconds with up to three decimals):
 * beyond 2^53 ns (a corrupt ring's times), a double would round them, and
 * spans ending at one time could seem to cross.
 *
 * @module
 */

/** A parsed trace event (loosely typed). */
export interface TraceEventJson {
  name: string;
  ph: string;
  ts: number;
  pid: number;
  tid: number;
  dur?: number;
  s?: string;
  cat?: string;
  args?: Record<string, unknown>;
}

/** The result of {@linkcode validateChromeTrace}: the events, or the problems found. */
export interface Validation {
  events: TraceEventJson[];
  errors: string[];
}

const METADATA_ARG: Record<string, string> = {
  process_name: "name",
  thread_name: "name",
  thread_sort_index: "sort_index",
  process_sort_index: "sort_index",
};

/** Checks `text`; `errors` is empty when the trace is valid. */
export function validateChromeTrace(text: string): Validation {
  const errors: string[] = [];
  const fail = (i: number, what: string) => {
    if (errors.length < 20) errors.push(`event ${i}: ${what}`);
  };
  // Exact nanoseconds of each event's `ts` and `dur`, from their text.
  const exact = new WeakMap<object, { ts?: bigint; dur?: bigint }>();
  const top = JSON.parse(
    text,
    function (this: object, key: string, value: unknown, context?: { source?: string }) {
      if ((key === "ts" || key === "dur") && typeof value === "number") {
        const ns = exactNs(context?.source, value);
        const e = exact.get(this) ?? {};
        e[key] = ns;
        exact.set(this, e);
      }
      return value;
    },
  );
  if (top === null || typeof top !== "object" || !Array.isArray(top.traceEvents)) {
    return { events: [], errors: ["top level is not {traceEvents: [...]}"] };
  }
  if (top.displayTimeUnit !== undefined && !["ms", "ns"].includes(top.displayTimeUnit)) {
    errors.push(`displayTimeUnit ${top.displayTimeUnit}`);
  }
  const events = top.traceEvents as TraceEventJson[];
  const lastTs = new Map<string, bigint>();
  const open = new Map<string, { name: string; start: bigint }[]>();
  const spans = new Map<string, [bigint, bigint][]>();
  const addSpan = (key: string, start: bigint, end: bigint) => {
    let l = spans.get(key);
    if (l === undefined) spans.set(key, l = []);
    l.push([start, end]);
  };
  events.forEach((e, i) => {
    if (e === null || typeof e !== "object") return fail(i, "not an object");
    if (typeof e.ph !== "string") return fail(i, "no ph");
    if (typeof e.ts !== "number" || !Number.isFinite(e.ts)) return fail(i, "no finite ts");
    if (!Number.isInteger(e.pid) || !Number.isInteger(e.tid)) return fail(i, "pid/tid");
    if (typeof e.name !== "string" || e.name === "") return fail(i, "no name");
    const key = `${e.pid}:${e.tid}`;
    if (e.ph === "M") {
      const arg = METADATA_ARG[e.name];
      if (arg === undefined) return fail(i, `unknown metadata ${e.name}`);
      if (e.args === undefined || e.args[arg] === undefined) {
        return fail(i, `M without args.${arg}`);
      }
      return;
    }
    const t = exact.get(e)!.ts!;
    const prev = lastTs.get(key);
    if (prev !== undefined && t < prev) fail(i, `ts ${e.ts} goes back on track ${key}`);
    lastTs.set(key, t);
    switch (e.ph) {
      case "X":
        if (typeof e.dur !== "number" || !(e.dur >= 0)) return fail(i, "X without dur >= 0");
        addSpan(key, t, t + exact.get(e)!.dur!);
        break;
      case "B": {
        let st = open.get(key);
        if (st === undefined) open.set(key, st = []);
        st.push({ name: e.name, start: t });
        break;
      }
      case "E": {
        const st = open.get(key);
        const top = st?.pop();
        if (top === undefined) return fail(i, `E ${e.name} without B on ${key}`);
        if (top.name !== e.name) return fail(i, `E ${e.name} closes B ${top.name} on ${key}`);
        addSpan(key, top.start, t);
        break;
      }
      case "i":
        if (e.s !== undefined && !["t", "p", "g"].includes(e.s)) fail(i, `instant scope ${e.s}`);
        break;
      case "C": {
        const vals = e.args === undefined ? [] : Object.values(e.args);
        if (vals.length === 0 || !vals.every((v) => typeof v === "number")) {
          fail(i, "C without numeric args");
        }
        break;
      }
      default:
        fail(i, `unexpected ph ${e.ph}`);
    }
  });
  for (const [key, st] of open) {
    if (st.length > 0) errors.push(`track ${key}: ${st.length} B without E (${st[0].name})`);
  }
  for (const [key, list] of spans) {
    list.sort((a, b) => cmp(a[0], b[0]) || cmp(b[1], a[1]));
    const stack: [bigint, bigint][] = [];
    for (const s of list) {
      while (stack.length > 0 && stack[stack.length - 1][1] <= s[0]) stack.pop();
      const top = stack[stack.length - 1];
      if (top !== undefined && s[1] > top[1]) {
        errors.push(`track ${key}: [${s[0]}, ${s[1]}] crosses [${top[0]}, ${top[1]}] (ns)`);
        if (errors.length >= 20) break;
      }
      stack.push(s);
    }
  }
  return { events, errors };
}

function cmp(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Nanoseconds of a JSON number of microseconds, exactly from its text `source` (digits with an
 * optional sign and up to three decimals), else rounded from `us`. */
function exactNs(source: string | undefined, us: number): bigint {
  const m = source === undefined ? null : /^(-?)(\d+)(?:\.(\d{1,3}))?$/.exec(source);
  if (m === null) return BigInt(Math.round(us * 1000));
  const v = BigInt(m[2]) * 1000n + BigInt((m[3] ?? "").padEnd(3, "0"));
  return m[1] === "-" ? -v : v;
}
