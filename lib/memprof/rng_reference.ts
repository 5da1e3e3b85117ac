/**
 * The text format of the RNG reference files (tests/fixtures/rng/*.txt), produced from
 * {@link MemprofRng}, plus a C-compatible `%.17g` formatter for the header's doubles.
 *
 * Format (one line each, "\n"-terminated):
 * 1. `domain <id> lambda <%.17g> one_log1m_lambda <%.17g>`;
 * 2. `geom` and `count` raw `rand_geom` values from a freshly seeded domain — or, when
 *    one_log1m_lambda is −inf, `sampling off (min lambda)` and nothing more;
 * 3. `binom` and `LEN:SAMPLES` per length, from a second freshly seeded domain after `rand_init`,
 *    calling `rand_binom` successively on the same state.
 *
 * @module
 */

import { geomToBigInt, isMinLambda, MemprofRng, oneLog1mLambda, type RngBackend } from "./rng.ts";

/** The binom lengths the reference files use, in order (fixtures README). */
export const DEFAULT_BINOM_LENGTHS: readonly number[] = Object.freeze([
  1,
  2,
  3,
  7,
  16,
  100,
  256,
  1000,
  5000,
  100000,
  1,
  1,
  1,
  1000000,
]);

/** Default number of geom values (as in the reference files). */
export { formatG } from "../util/ocaml_printf.ts";
import { formatG } from "../util/ocaml_printf.ts";

export const DEFAULT_GEOM_COUNT = 200;

/** Options for {@link writeRngReference} / {@link formatRngReference}. */
export interface RngReferenceOptions {
  /** Batch kernel for the generators (default "auto"). */
  backend?: RngBackend;
}

/** `%lu` of a geom value. */
function geomText(g: number): string {
  return g <= Number.MAX_SAFE_INTEGER ? String(g) : geomToBigInt(g).toString();
}

/**
 * Streams the reference text for (domain, lambda) in chunks (each a whole line or a part of the
 * geom/binom line), so very long outputs need not be held in memory.
 *
 * @param domainId domain id (non-negative integer below 2^64)
 * @param lambda sampling rate in [0, 1]
 * @param count number of geom values
 * @param lengths binom block lengths (integers in [0, Max_long))
 * @param write receives the text
 */
export function writeRngReference(
  domainId: number | bigint,
  lambda: number,
  count: number,
  lengths: readonly (number | bigint)[],
  write: (chunk: string) => void,
  options: RngReferenceOptions = {},
): void {
  const id = BigInt(domainId);
  if (id < 0n || id >= 1n << 64n) throw new RangeError(`domain id out of range: ${domainId}`);
  if (!(Number.isSafeInteger(count) && count >= 0)) {
    throw new RangeError(`count must be a non-negative integer, got ${count}`);
  }
  const o = oneLog1mLambda(lambda);
  write(`domain ${id} lambda ${formatG(lambda)} one_log1m_lambda ${formatG(o)}\n`);
  if (isMinLambda(o)) {
    write("sampling off (min lambda)\n");
    return;
  }
  const backend = options.backend ?? "auto";

  const g = new MemprofRng(id, undefined, { backend });
  const CHUNK = 4096;
  let line = "geom";
  for (let i = 0; i < count; i++) {
    line += " " + geomText(g.geom(o));
    if ((i + 1) % CHUNK === 0) {
      write(line);
      line = "";
    }
  }
  write(line + "\n");

  const b = new MemprofRng(id, o, { backend });
  line = "binom";
  for (const len of lengths) line += ` ${len}:${b.binom(len, o)}`;
  write(line + "\n");
}

/**
 * The reference file text for (domain, lambda): byte for byte what the C reference generator
 * prints (see the module doc). `lengths` defaults to {@link DEFAULT_BINOM_LENGTHS}.
 */
export function formatRngReference(
  domainId: number | bigint,
  lambda: number,
  count: number = DEFAULT_GEOM_COUNT,
  lengths: readonly (number | bigint)[] = DEFAULT_BINOM_LENGTHS,
  options: RngReferenceOptions = {},
): string {
  const parts: string[] = [];
  writeRngReference(domainId, lambda, count, lengths, (c) => parts.push(c), options);
  return parts.join("");
}
