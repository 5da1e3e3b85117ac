/**
 * `memprof-lab sampler` (`deno task sampler`): prints the gap sequence a domain's memprof RNG will use, in the format of
 * tests/fixtures/rng/*.txt (see lib/memprof/rng_reference.ts).
 *
 *   memprof-lab sampler --domain 0 --rate 0.01 --count 200
 *   memprof-lab sampler --rate 1e-4 --binom 1 2 3 --binom 1000,5000
 *
 * @module
 */

import {
  DEFAULT_BINOM_LENGTHS,
  DEFAULT_GEOM_COUNT,
  writeRngReference,
} from "../lib/memprof/rng_reference.ts";
import { MAX_LONG } from "../lib/memprof/rng.ts";
import { exitStatusOf, UsageError, writeStderr, writeStdout } from "./_io.ts";
import { usageLines } from "./_usage.ts";
import { parseBigInteger, parseCommandLine, parseRate, usageError } from "./_args.ts";

/** Usage text printed by --help. */
export const USAGE = `${
  usageLines("sampler", "--rate L [--domain ID] [--count N] [--binom LEN ...]")
}

Prints memprof's sampling random numbers (OCaml 5.3 runtime/memprof.c) for one domain,
in the format of tests/fixtures/rng/*.txt:
  line 1  domain <ID> lambda <L> one_log1m_lambda <1/log1p(-L)>   (both as C's %.17g)
  line 2  geom and N rand_geom values from a freshly seeded domain
          (or "sampling off (min lambda)" when 1/log1p(-L) is -inf, e.g. L = 0; then nothing more)
  line 3  binom and LEN:SAMPLES for each length, rand_binom called in order on a second
          freshly seeded domain after rand_init

Options:
  --rate L        sampling rate lambda, a number in [0, 1] (required)
  --domain ID     domain id seeding the generator, an integer in [0, 2^64) (default 0)
  --count N       number of geom values (default ${DEFAULT_GEOM_COUNT})
  --binom LEN...  block lengths in words, integers in [0, 2^62 - 1); repeat the option, give
                  several values after it, or separate them with commas
                  (default: ${DEFAULT_BINOM_LENGTHS.join(" ")})
  -h, --help      show this help

Exit status: 0 ok, 2 for a wrong command line (with no arguments, this help on stderr).
`;

/** Where {@link main} writes. */
export interface SamplerIo {
  /** Receives the reference text (or the help). */
  stdout(text: string): void;
  /** Receives error messages. */
  stderr(text: string): void;
}

/** A whole number of `what` from 0 to `max`. */
function natural(what: string, text: string, max: bigint): bigint {
  return parseBigInteger("sampler", what, text, { min: 0n, max });
}

/**
 * Runs the command with the given arguments; returns the exit status (0 ok, 2 usage error).
 * Output goes through `io` (by default the process's stdout/stderr), streamed in chunks.
 */
export function main(args: string[], io: SamplerIo = processIo()): number {
  try {
    const { values, tokens } = parseCommandLine("sampler", args, {
      options: {
        domain: { type: "string" },
        rate: { type: "string" },
        count: { type: "string" },
        binom: { type: "string", multiple: true },
        help: { type: "boolean", short: "h" },
      },
      allowPositionals: true,
      tokens: true,
    });
    if (values.help) {
      io.stdout(USAGE);
      return 0;
    }
    // Positionals are accepted only as further lengths right after --binom ("--binom 1 2 3").
    const binomTexts: string[] = [];
    let afterBinom = false;
    for (const t of tokens) {
      if (t.kind === "option") {
        afterBinom = t.name === "binom";
        if (afterBinom && t.value !== undefined) binomTexts.push(t.value);
      } else if (t.kind === "positional") {
        if (!afterBinom) throw usageError("sampler", `unexpected argument '${t.value}'`);
        binomTexts.push(t.value);
      } else {
        afterBinom = false; // "--"
      }
    }
    if (values.rate === undefined) throw usageError("sampler", "--rate is required");
    const lambda = parseRate("sampler", "--rate", values.rate);
    const domain = values.domain === undefined
      ? 0n
      : natural("--domain", values.domain, (1n << 64n) - 1n);
    const count = values.count === undefined
      ? DEFAULT_GEOM_COUNT
      : Number(natural("--count", values.count, BigInt(Number.MAX_SAFE_INTEGER)));
    const lengths: (number | bigint)[] = binomTexts.length === 0
      ? [...DEFAULT_BINOM_LENGTHS]
      : binomTexts.flatMap((s) => s.split(",")).map((s) => {
        const n = natural("--binom length", s, MAX_LONG - 1n);
        return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
      });
    writeRngReference(domain, lambda, count, lengths, io.stdout);
    return 0;
  } catch (e) {
    // With no arguments at all, the usage instead of the pointer to it.
    if (e instanceof UsageError) {
      return exitStatusOf(
        args.length === 0 ? new UsageError(e.message, USAGE.trimEnd()) : e,
        io.stderr,
      );
    }
    throw e;
  }
}

/** Writes to the process's stdout/stderr synchronously (no permission needed). */
export function processIo(): SamplerIo {
  return { stdout: writeStdout, stderr: writeStderr };
}

/** {@linkcode main} for the real process, as the other commands' `run`: the exit status, 0 when
 * the reader of the output went away (`memprof-lab sampler … | head`). */
export function run(args: string[]): Promise<number> {
  try {
    return Promise.resolve(main(args));
  } catch (e) {
    if (e instanceof Deno.errors.BrokenPipe) return Promise.resolve(0);
    throw e;
  }
}

if (import.meta.main) Deno.exitCode = await run(Deno.args);
