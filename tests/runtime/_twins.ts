/**
 * Counts plain/resumable twins: pairs of functions or methods of one file where one is the
 * resumable (generator) form of the other — `xG` beside `x`, `xOp`, `xWork` or `xWorkG`, and
 * `compilePlain` beside `compileResumable` — and sorts each pair into a `driver` (the plain one
 * only drives a generator to its end: its body is one `runToEnd(…)` call, so the logic is
 * written once), a `fast` path (the plain one tests and moves fields, a bump-pointer fast path,
 * and otherwise drives a generator) or a `twin` (both hold logic: the same truth written twice).
 *
 * It reads the files as text (declarations at the start of a line, bodies by brace depth), which
 * is enough for this repository's style (`deno fmt`).
 *
 *   deno run --allow-read tests/runtime/_twins.ts [files or folders…]
 *
 * (default: lib/runtime, lib/memprof and the scenario engine).
 * @module
 */

/** A function or method declared in a file. */
export interface Declaration {
  /** Its name (`#name` for a private method). */
  readonly name: string;
  /** The class it is a method of ("" for a function). */
  readonly owner: string;
  /** 1-based line of its declaration. */
  readonly line: number;
  /** A generator. */
  readonly generator: boolean;
  /** Its body, between its outer braces. */
  readonly body: string;
}

/** A plain/resumable pair of one file. */
export interface Pair {
  readonly file: string;
  readonly plain: Declaration;
  readonly resumable: Declaration;
  /** `driver`: the plain one only runs a generator to its end; `fast`: it is a bump-pointer fast
   * path in front of such a driver; `twin`: both hold logic. */
  readonly kind: "driver" | "fast" | "twin";
}

const KEYWORDS = new Set([
  "if",
  "for",
  "while",
  "switch",
  "catch",
  "return",
  "function",
  "constructor",
  "super",
  "typeof",
  "new",
  "throw",
  "await",
  "yield",
]);

const CLASS = /^(?:export\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)/;
const FUNCTION = /^\s*(?:export\s+)?(?:async\s+)?function\s*(\*)?\s*([A-Za-z_$][\w$]*)\s*[<(]/;
const METHOD =
  /^ {2}(?:(?:static|override|readonly|public|private|protected|async|get|set)\s+)*(\*)?\s*(#?[A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\(/;

/** The functions and methods declared in `text`, with their bodies. */
export function declarations(text: string): Declaration[] {
  const lines = text.split("\n");
  const out: Declaration[] = [];
  let owner = "";
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    const c = CLASS.exec(l);
    if (c !== null) owner = c[1];
    else if (l.startsWith("}")) owner = "";
    const m = FUNCTION.exec(l) ?? METHOD.exec(l);
    if (m === null || KEYWORDS.has(m[2])) continue;
    if (/;\s*$/.test(l)) continue; // a call or a declaration without a body
    const body = bodyFrom(text, offsetOf(lines, i) + m[0].length - 1);
    if (body === undefined) continue;
    out.push({ name: m[2], owner, line: i + 1, generator: m[1] === "*", body });
  }
  return out;
}

function offsetOf(lines: readonly string[], i: number): number {
  let o = 0;
  for (let k = 0; k < i; k++) o += lines[k].length + 1;
  return o;
}

/** The body of the declaration whose parameter list opens at `from`: the text between the
 * braces after its parameters (undefined for a declaration without a body). */
function bodyFrom(text: string, from: number): string | undefined {
  let depth = 0, i = from;
  // The parameters (parentheses and what they nest), then the return type, up to `{` or `;`.
  for (; i < text.length; i++) {
    const c = text[i];
    if (c === "=" && text[i + 1] === ">") i++; // an arrow, not a closing angle bracket
    else if (c === "(" || c === "<" || c === "[") depth++;
    else if (c === ")" || c === ">" || c === "]") depth--;
    else if (depth === 0 && c === "{") {
      // `: { a: number }` as a return type: an object type follows a colon.
      const before = text.slice(from, i).trimEnd();
      if (!before.endsWith(":") && !before.endsWith("|")) break;
      i = closing(text, i);
    } else if (depth === 0 && c === ";") return undefined;
  }
  if (i >= text.length) return undefined;
  const end = closing(text, i);
  return text.slice(i + 1, end);
}

/** The index of the brace closing the one at `open`. */
function closing(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i;
  }
  return text.length;
}

/** The plain names a resumable `name` pairs with. */
function plainNames(name: string): string[] {
  if (name === "compileResumable") return ["compilePlain"];
  if (!name.endsWith("G") || name.length < 2) return [];
  const base = name.slice(0, -1);
  const names = [base, base + "Op", base + "Work"];
  if (base.endsWith("Work")) names.push(base.slice(0, -4) + "Op");
  return names;
}

/** Whether `body` only drives a generator to its end. */
function isDriver(body: string): boolean {
  const s = withoutComments(body).trim().replace(/\s+/g, " ");
  return /^(?:return )?runToEnd\(.*\);?$/.test(s) && !/;.+/.test(s.replace(/;$/, ""));
}

/**
 * Whether `body` is a bump-pointer fast path in front of a driver: it drives a generator to its
 * end, and besides that call it calls nothing (only tests and moves fields: `if`, `for`).
 */
function isFastPath(body: string): boolean {
  const s = withoutComments(body);
  const k = s.indexOf("runToEnd(");
  if (k < 0) return false;
  const rest = s.slice(0, k) + s.slice(closingParen(s, k + "runToEnd".length));
  return !/[\w$\]]\s*\(/.test(rest.replace(/\b(?:if|for|while)\s*\(/g, ""));
}

function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
}

/** The index after the parenthesis closing the one at `open`. */
function closingParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === "(") depth++;
    else if (text[i] === ")" && --depth === 0) return i + 1;
  }
  return text.length;
}

/** The plain/resumable pairs of the file `file` whose text is `text`. */
export function pairsOf(file: string, text: string): Pair[] {
  const decls = declarations(text);
  const byName = new Map<string, Declaration[]>();
  for (const d of decls) {
    const l = byName.get(d.name) ?? [];
    l.push(d);
    byName.set(d.name, l);
  }
  const pairs: Pair[] = [];
  for (const r of decls) {
    for (const p of plainNames(r.name)) {
      for (const plain of byName.get(p) ?? []) {
        if (plain.generator || plain.owner !== r.owner) continue;
        pairs.push({
          file,
          plain,
          resumable: r,
          kind: isDriver(plain.body) ? "driver" : isFastPath(plain.body) ? "fast" : "twin",
        });
      }
    }
  }
  return pairs;
}

/** The `.ts` files below each of `paths` (files are taken as they are). */
export async function tsFiles(paths: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    const info = await Deno.stat(p);
    if (info.isFile) {
      out.push(p);
      continue;
    }
    for await (const e of Deno.readDir(p)) {
      const q = `${p}/${e.name}`;
      if (e.isDirectory) out.push(...await tsFiles([q]));
      else if (e.name.endsWith(".ts")) out.push(q);
    }
  }
  return out.sort();
}

/** The default places: the runtime, memprof and the scenario engine. */
export const DEFAULT_PATHS: readonly string[] = [
  "lib/runtime",
  "lib/memprof",
  "lib/scenario/engine",
  "lib/scenario/engine.ts",
];

if (import.meta.main) {
  const paths = Deno.args.length > 0 ? Deno.args : DEFAULT_PATHS;
  const pairs: Pair[] = [];
  for (const f of await tsFiles(paths)) pairs.push(...pairsOf(f, await Deno.readTextFile(f)));
  for (const p of pairs) {
    console.log(
      `${
        p.kind.padEnd(6)
      } ${p.file}:${p.plain.line} ${p.plain.name} ~ :${p.resumable.line} ${p.resumable.name}`,
    );
  }
  const count = (k: Pair["kind"]) => pairs.filter((p) => p.kind === k).length;
  console.log(
    `${count("twin")} twins, ${count("fast")} fast paths in front of a driver, ` +
      `${count("driver")} drivers (${pairs.length} pairs)`,
  );
}
