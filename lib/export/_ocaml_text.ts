/**
 * Text from a scenario (names, frames, its description, user event names) as it is written into
 * an exported OCaml program: only ever inside an OCaml string literal, which OCaml's lexer reads
 * back to exactly the bytes of the text. Comments hold such literals too: inside a comment
 * OCaml's lexer reads a string literal whole (parsing/lexer.mll, rule `comment`), so no text
 * in it can end the comment, open a nested one or start another literal. No user text is ever
 * written as code or bare in a comment.
 * @module
 */

const encoder = new TextEncoder();

const BACKSLASH = 0x5c;
const QUOTE = 0x22;

/**
 * An OCaml string literal of `bytes`, which OCaml's lexer reads back as exactly these bytes:
 * printable ASCII (0x20 to 0x7e) as itself, but `\` and `"` escaped with a backslash; every
 * other byte (control bytes, DEL, the bytes of non-ASCII UTF-8) as a decimal escape `\ddd`
 * (parsing/lexer.mll, rule `string`). So the literal is printable ASCII on one line: no raw line
 * break (which the lexer would normalise), no character that could read differently on screen.
 */
export function ocamlBytesLiteral(bytes: Uint8Array): string {
  let out = '"';
  for (const b of bytes) {
    if (b === BACKSLASH || b === QUOTE) out += `\\${String.fromCharCode(b)}`;
    else if (b >= 0x20 && b <= 0x7e) out += String.fromCharCode(b);
    else out += `\\${String(b).padStart(3, "0")}`;
  }
  return out + '"';
}

/**
 * An OCaml string literal that OCaml's lexer reads back as exactly the UTF-8 bytes of `text`
 * (see {@linkcode ocamlBytesLiteral}). Throws a RangeError when `text` is not well-formed
 * Unicode: a lone surrogate has no UTF-8 form, so no literal would give it back.
 */
export function ocamlString(text: string): string {
  if (!text.isWellFormed()) {
    throw new RangeError(`${JSON.stringify(text)} is not well-formed Unicode (a lone surrogate)`);
  }
  return ocamlBytesLiteral(encoder.encode(text));
}

/** The string literal of `text` written in a comment: as {@linkcode ocamlString}, but a lone
 * surrogate becomes U+FFFD (a comment only shows the text). */
export function ocamlCommentString(text: string): string {
  return ocamlString(text.toWellFormed());
}
