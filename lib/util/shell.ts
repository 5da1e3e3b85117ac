/**
 * Command lines printed for a user to paste into a shell (hints, build commands): each word as
 * the shell must see it.
 * @module
 */

/** Characters a POSIX shell leaves alone in a word (no quoting, globbing or expansion). */
const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** Whether `word` needs no quoting in a shell (nor escaping in an OCaml comment). */
export function isPlainShellWord(word: string): boolean {
  return PLAIN.test(word);
}

/** `word` as one shell word: as it is when {@linkcode isPlainShellWord}, else in single quotes
 * (a quote inside written `'\''`). */
export function shellWord(word: string): string {
  return isPlainShellWord(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
