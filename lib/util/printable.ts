/**
 * The one helper every command uses to print text that comes from its input (function and file
 * names, executable names, user event names…) to a terminal or a text file: a name is a trace's
 * bytes, and a control byte in it (an escape sequence, a carriage return, a newline) would reach
 * the terminal raw, or break a line-based format.
 * @module
 */

/** Escapes control characters — C0 (U+0000 to U+001F), DEL and C1 (U+007F to U+009F) — and the
 * characters of `also` as `\xNN`; when the result is longer than `maxChars` characters, cuts it
 * there (never inside an escape or a surrogate pair) and appends `…[+N chars]`, N counting the
 * characters of the escaped text left out. Text without control characters, within the bound,
 * comes back unchanged. A backslash is not escaped: `\x1b` in the output is either an escaped
 * ESC or those four characters in the name. */
export function printable(
  s: string,
  options: { also?: string; maxChars?: number } = {},
): string {
  const also = options.also ?? "";
  const max = options.maxChars ?? Infinity;
  if (s.length <= max && !needsEscape(s, also)) return s;
  let out = "";
  let total = 0, cut = -1;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let piece: string;
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || (also !== "" && also.includes(s[i]))) {
      piece = "\\x" + c.toString(16).padStart(2, "0");
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      piece = d >= 0xdc00 && d <= 0xdfff ? s[i] + s[++i] : s[i];
    } else piece = s[i];
    if (cut < 0 && total + piece.length > max) cut = total;
    if (cut < 0) out += piece;
    total += piece.length;
  }
  return cut < 0 ? out : `${out}…[+${total - cut} chars]`;
}

function needsEscape(s: string, also: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  }
  if (also !== "") {
    for (const ch of also) if (s.includes(ch)) return true;
  }
  return false;
}

/** {@linkcode printable} for a message of several lines: its newlines and tabs are kept, every
 * other control character is escaped as `\xNN`. What the commands print as an error or a
 * warning, whose text may quote a path or a name from their input. */
export function printableLines(s: string): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c < 0x20 && c !== 0x0a && c !== 0x09) || (c >= 0x7f && c <= 0x9f)) {
      out += s.slice(from, i) + "\\x" + c.toString(16).padStart(2, "0");
      from = i + 1;
    }
  }
  return from === 0 ? s : out + s.slice(from);
}
