// A reader of OCaml source written for the tests (from the rules of OCaml 5.3's
// parsing/lexer.mll, rules `token`, `comment`, `string` and `quoted_string`): it finds the
// comments, string literals (also those inside comments, which OCaml's lexer reads whole) and
// character literals of a program, and decodes each string literal to its bytes. Only what the
// exporter's programs need: enough to tell the code of a program from the text in it; and
// the text of one of its top-level functions (`definition`).
import assert from "node:assert/strict";

/** A string literal found in a program. */
export interface OCamlLiteral {
  /** The literal as written, quotes included (its bytes as UTF-8 text). */
  readonly raw: string;
  /** The bytes it stands for. */
  readonly bytes: Uint8Array;
  /** Inside a comment. */
  readonly inComment: boolean;
}

/** What {@linkcode scanOCaml} finds in a program. */
export interface OCamlScan {
  /** The code: the program without its comments, each string literal replaced by `"…"`. */
  readonly code: string;
  /** Every string literal, in order (quoted strings `{id|…|id}` included). */
  readonly literals: readonly OCamlLiteral[];
}

/** Source the reader cannot read as OCaml's lexer would (an unterminated comment or string, an
 * escape out of range). */
export class OCamlLexError extends Error {
  /** Error class name. */
  override name = "OCamlLexError";
}

const enc = new TextEncoder();
const dec = new TextDecoder();

const c = (s: string) => s.charCodeAt(0);
const isDigit = (b: number) => b >= 0x30 && b <= 0x39;
const isOct = (b: number) => b >= 0x30 && b <= 0x37;
const isHex = (b: number) => isDigit(b) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
const isLower = (b: number) => (b >= 0x61 && b <= 0x7a) || b === c("_");
const hexVal = (b: number) => isDigit(b) ? b - 0x30 : (b | 0x20) - 0x61 + 10;

/** The byte an escape `\c` (c one of `\ ' " n t b r` and space) stands for. */
function backslashChar(b: number): number | undefined {
  switch (String.fromCharCode(b)) {
    case "\\":
      return c("\\");
    case "'":
      return c("'");
    case '"':
      return c('"');
    case "n":
      return 10;
    case "t":
      return 9;
    case "b":
      return 8;
    case "r":
      return 13;
    case " ":
      return 32;
  }
  return undefined;
}

/** A newline at `i` (`\r`* `\n`): its length, or 0. */
function newlineAt(src: Uint8Array, i: number): number {
  let j = i;
  while (src[j] === 13) j++;
  return src[j] === 10 ? j - i + 1 : 0;
}

/**
 * Reads the string literal whose opening `"` is at byte `start` of `src`, as the rule `string`
 * does: returns its bytes and the index after its closing quote. Throws
 * {@linkcode OCamlLexError} when it is unterminated or an escape is out of range.
 */
export function readStringLiteral(
  src: Uint8Array,
  start: number,
): { readonly bytes: Uint8Array; readonly end: number } {
  const out: number[] = [];
  let i = start + 1;
  for (;;) {
    if (i >= src.length) throw new OCamlLexError(`unterminated string literal at byte ${start}`);
    const b = src[i];
    if (b === c('"')) return { bytes: Uint8Array.from(out), end: i + 1 };
    const nl = newlineAt(src, i);
    if (nl > 0) {
      out.push(10); // store_normalized_newline
      i += nl;
      continue;
    }
    if (b !== c("\\")) {
      out.push(b);
      i++;
      continue;
    }
    const n = src[i + 1];
    const escNl = newlineAt(src, i + 1);
    if (escNl > 0) {
      // Backslash, newline, then blanks: nothing.
      i += 1 + escNl;
      while (src[i] === c(" ") || src[i] === 9) i++;
      continue;
    }
    const simple = n === undefined ? undefined : backslashChar(n);
    if (simple !== undefined) {
      out.push(simple);
      i += 2;
    } else if (isDigit(n) && isDigit(src[i + 2]) && isDigit(src[i + 3])) {
      const v = (n - 0x30) * 100 + (src[i + 2] - 0x30) * 10 + (src[i + 3] - 0x30);
      if (v > 255) throw new OCamlLexError(`illegal escape \\${v} at byte ${i}`);
      out.push(v);
      i += 4;
    } else if (n === c("o") && isOct(src[i + 2]) && isOct(src[i + 3]) && isOct(src[i + 4])) {
      const v = (src[i + 2] - 0x30) * 64 + (src[i + 3] - 0x30) * 8 + (src[i + 4] - 0x30);
      if (v > 255) throw new OCamlLexError(`illegal octal escape at byte ${i}`);
      out.push(v);
      i += 5;
    } else if (n === c("x") && isHex(src[i + 2]) && isHex(src[i + 3])) {
      out.push(hexVal(src[i + 2]) * 16 + hexVal(src[i + 3]));
      i += 4;
    } else if (n === c("u") && src[i + 2] === c("{") && isHex(src[i + 3])) {
      let j = i + 3;
      let v = 0;
      while (isHex(src[j])) v = v * 16 + hexVal(src[j++]);
      if (src[j] !== c("}")) {
        // Not a \u{…} escape: the lexer keeps the backslash and the letter (and warns).
        out.push(b, n);
        i += 2;
        continue;
      }
      if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) {
        throw new OCamlLexError(`illegal \\u escape at byte ${i}`);
      }
      out.push(...enc.encode(String.fromCodePoint(v)));
      i = j + 1;
    } else {
      // An unknown escape: kept as written (the lexer warns).
      out.push(b);
      if (n !== undefined) out.push(n);
      i += 2;
    }
  }
}

/** A quoted string `{id|…|id}` whose `{` is at `start`: its bytes and end, or undefined when
 * no quoted string starts there. */
function readQuoted(
  src: Uint8Array,
  start: number,
): { readonly bytes: Uint8Array; readonly end: number } | undefined {
  let j = start + 1;
  while (isLower(src[j])) j++;
  if (src[j] !== c("|")) return undefined;
  const close = Uint8Array.from([c("|"), ...src.subarray(start + 1, j), c("}")]);
  for (let k = j + 1; k + close.length <= src.length; k++) {
    if (close.every((x, d) => src[k + d] === x)) {
      return { bytes: src.slice(j + 1, k), end: k + close.length };
    }
  }
  throw new OCamlLexError(`unterminated quoted string at byte ${start}`);
}

/** The length of a character literal at `i` (the patterns of the rules `token` and
 * `comment`), or 0. */
function charLiteralAt(src: Uint8Array, i: number): number {
  if (src[i] !== c("'")) return 0;
  const nl = newlineAt(src, i + 1);
  if (nl > 0) return src[i + 1 + nl] === c("'") ? nl + 2 : 0;
  const b = src[i + 1];
  if (b === undefined) return 0;
  if (b !== c("\\") && b !== c("'") && b !== 10 && b !== 13) {
    return src[i + 2] === c("'") ? 3 : 0;
  }
  if (b !== c("\\")) return 0;
  const n = src[i + 2];
  if (backslashChar(n) !== undefined && src[i + 3] === c("'")) return 4;
  if (isDigit(n) && isDigit(src[i + 3]) && isDigit(src[i + 4]) && src[i + 5] === c("'")) return 6;
  if (
    n === c("o") && isOct(src[i + 3]) && isOct(src[i + 4]) && isOct(src[i + 5]) &&
    src[i + 6] === c("'")
  ) return 7;
  if (n === c("x") && isHex(src[i + 3]) && isHex(src[i + 4]) && src[i + 5] === c("'")) return 6;
  return 0;
}

/** Reads program `source` as OCaml's lexer does: its code (comments removed, each string
 * literal as `"…"`) and its string literals. Throws {@linkcode OCamlLexError} for an
 * unterminated comment or literal. */
export function scanOCaml(source: string): OCamlScan {
  const src = enc.encode(source);
  // The code's bytes, in a buffer that grows (a program can be megabytes long).
  let code = new Uint8Array(src.length + 64);
  let codeLen = 0;
  const emit = (bytes: ArrayLike<number>) => {
    if (codeLen + bytes.length > code.length) {
      const bigger = new Uint8Array(2 * (codeLen + bytes.length));
      bigger.set(code.subarray(0, codeLen));
      code = bigger;
    }
    code.set(bytes, codeLen);
    codeLen += bytes.length;
  };
  const literals: OCamlLiteral[] = [];
  const placeholder = enc.encode('"…"');
  let i = 0;
  const literal = (inComment: boolean): boolean => {
    if (src[i] === c('"')) {
      const { bytes, end } = readStringLiteral(src, i);
      literals.push({ raw: dec.decode(src.subarray(i, end)), bytes, inComment });
      i = end;
      return true;
    }
    if (src[i] === c("{")) {
      const q = readQuoted(src, i);
      if (q === undefined) return false;
      literals.push({ raw: dec.decode(src.subarray(i, q.end)), bytes: q.bytes, inComment });
      i = q.end;
      return true;
    }
    return false;
  };
  while (i < src.length) {
    if (src[i] === c("(") && src[i + 1] === c("*")) {
      const start = i;
      let depth = 1;
      i += 2;
      while (depth > 0) {
        if (i >= src.length) throw new OCamlLexError(`unterminated comment at byte ${start}`);
        if (src[i] === c("(") && src[i + 1] === c("*")) {
          depth++;
          i += 2;
        } else if (src[i] === c("*") && src[i + 1] === c(")")) {
          depth--;
          i += 2;
        } else if (literal(true)) {
          // read whole
        } else if (src[i] === c("'") && src[i + 1] === c("'")) {
          i += 2;
        } else {
          i += charLiteralAt(src, i) || 1;
        }
      }
      emit([c(" ")]);
      continue;
    }
    const before = i;
    if (literal(false)) {
      emit(placeholder);
      continue;
    }
    i = before;
    const n = charLiteralAt(src, i) || 1;
    emit(src.subarray(i, i + n));
    i += n;
  }
  return { code: dec.decode(code.subarray(0, codeLen)), literals };
}

/** The text of the top-level definition `let[@inline never] <fn> () = …` in `source`. */
export function definition(source: string, fn: string): string {
  const start = source.indexOf(`let[@inline never] ${fn} () =`);
  assert.ok(start >= 0, `no definition of ${fn}`);
  const end = source.indexOf("\n\n", start);
  return source.slice(start, end < 0 ? undefined : end);
}
