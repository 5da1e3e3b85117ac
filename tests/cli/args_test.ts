// cli/_args.ts: the one way every command reads its command line (in-process, no permissions).
import assert from "node:assert/strict";
import {
  argumentIndex,
  parseBigInteger,
  parseCommandArgs,
  parseCommandLine,
  parseInteger,
  parseIntegerOption,
  parseRate,
  unknownCommandMessage,
  unknownOptionMessage,
} from "../../cli/_args.ts";
import { UsageError } from "../../cli/_io.ts";
import { editDistance, suggest } from "../../lib/scenario/_options.ts";
import * as shared from "../../lib/util/suggest.ts";

const OPTIONS = {
  limit: { type: "string" },
  json: { type: "boolean" },
  output: { type: "string", short: "o" },
  help: { type: "boolean", short: "h" },
} as const;

/** The UsageError `f` throws: its message and hint. */
function refusal(f: () => unknown): { message: string; hint: string | undefined } {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof UsageError, `not a UsageError: ${e}`);
    return { message: e.message, hint: e.hint };
  }
  assert.fail("accepted");
}

Deno.test("the scenario validator and the command line share one did-you-mean helper", () => {
  assert.equal(suggest, shared.suggest);
  assert.equal(editDistance, shared.editDistance);
});

Deno.test("parseCommandLine parses as parseArgs does", () => {
  const r = parseCommandLine("trace top", ["f.ctf", "--limit", "3", "--json", "-o", "x"], {
    allowPositionals: true,
    options: OPTIONS,
  });
  assert.deepEqual(r.positionals, ["f.ctf"]);
  assert.equal(r.values.limit, "3");
  assert.equal(r.values.json, true);
  assert.equal(r.values.output, "x");
  // A value starting with '-' is given inline; '--' ends the options.
  const inline = parseCommandLine("t", ["--limit=-3", "--", "--json"], {
    allowPositionals: true,
    options: OPTIONS,
  });
  assert.equal(inline.values.limit, "-3");
  assert.deepEqual(inline.positionals, ["--json"]);
});

Deno.test("a wrong command line is one line, with the command's help as its hint", () => {
  const parse = (args: string[], allowPositionals = true) => () =>
    parseCommandLine("trace top", args, { allowPositionals, options: OPTIONS });
  const cases: [string[], string][] = [
    [["--limt", "3"], "unknown option --limt (did you mean --limit?)"],
    [["--LIMIT", "3"], "unknown option --LIMIT (did you mean --limit?)"],
    [["--frobnicate"], "unknown option --frobnicate"],
    [["-x"], "unknown option -x"],
    [["-hx"], "unknown option -x"],
    [["--limit"], "option --limit needs a value"],
    [
      ["--limit", "--json"],
      "option --limit needs a value, got option-like '--json' (for a value starting with '-', " +
      "write --limit=--json)",
    ],
    [["--json=yes"], "option --json takes no value, got 'yes'"],
  ];
  for (const [args, message] of cases) {
    const r = refusal(parse(args));
    assert.equal(r.message, message, args.join(" "));
    assert.equal(r.hint, "Run 'memprof-lab trace top --help' for usage.");
    assert.ok(!r.message.includes("\n"));
  }
  assert.equal(refusal(parse(["a"], false)).message, "unexpected argument 'a'");
});

Deno.test("unknown commands and options get the closest known name when one is close", () => {
  assert.equal(
    unknownOptionMessage("--chek", ["check", "update"]),
    "unknown option --chek (did you mean --check?)",
  );
  assert.equal(unknownOptionMessage("--zzzz", ["check"]), "unknown option --zzzz");
  assert.equal(
    unknownCommandMessage("dupm", ["dump", "info"]),
    "unknown command 'dupm' (did you mean dump?)",
  );
  assert.equal(unknownCommandMessage("frob", ["dump"]), "unknown command 'frob'");
});

Deno.test("parseInteger: one form (digits, sign, power of ten), safe integers, a range", () => {
  const int = (text: string, range?: { min?: number; max?: number }) =>
    parseInteger("c", "--n", text, range);
  assert.equal(int("0"), 0);
  assert.equal(int("42"), 42);
  assert.equal(int("+7"), 7);
  assert.equal(int("1e9"), 1e9);
  assert.equal(int("1E3"), 1000);
  assert.equal(int("-5", { min: -10 }), -5);
  assert.equal(int(String(Number.MAX_SAFE_INTEGER)), Number.MAX_SAFE_INTEGER);
  for (
    const bad of ["", " 5", "5 ", "1.5", "1.0", "0x10", "1e-3", "abc", "NaN", "Infinity", "-1"]
  ) {
    const r = refusal(() => int(bad));
    assert.equal(r.message, `--n must be an integer ≥ 0, got '${bad}'`);
    assert.equal(r.hint, "Run 'memprof-lab c --help' for usage.");
  }
  assert.equal(
    refusal(() => int("9007199254740992")).message,
    "--n must be at most 2^53 - 1 (9007199254740991), got '9007199254740992'",
  );
  assert.match(refusal(() => int("1e400")).message, /^--n must be at most 2\^53 - 1 /);
  assert.match(refusal(() => int("1e99999")).message, /^--n must be at most 2\^53 - 1 /);
  assert.equal(int("0e99999"), 0);
  assert.equal(
    refusal(() => int("0", { min: 1, max: 8 })).message,
    "--n must be an integer from 1 to 8, got '0'",
  );
  assert.equal(
    refusal(() => int("x", { min: -Number.MAX_SAFE_INTEGER })).message,
    "--n must be an integer, got 'x'",
  );
});

Deno.test("parseBigInteger reads the same form past 2^53", () => {
  assert.equal(parseBigInteger("c", "ID", "18446744073709551615"), 18446744073709551615n);
  assert.equal(parseBigInteger("c", "ID", "-3"), -3n);
  assert.equal(parseBigInteger("c", "ID", "2e20"), 200000000000000000000n);
  assert.equal(
    refusal(() => parseBigInteger("c", "ID", "1.5")).message,
    "ID must be an integer, got '1.5'",
  );
  assert.equal(
    refusal(() => parseBigInteger("c", "ID", "16", { min: 0n, max: 15n })).message,
    "ID must be an integer from 0 to 15, got '16'",
  );
});

Deno.test("parseIntegerOption: absent is undefined, present is parseInteger's", () => {
  assert.equal(parseIntegerOption("c", "--n", undefined, { min: 1 }), undefined);
  assert.equal(parseIntegerOption("c", "--n", "3", { min: 1 }), 3);
  assert.equal(
    refusal(() => parseIntegerOption("c", "--n", "0", { min: 1, max: 4 })).message,
    "--n must be an integer from 1 to 4, got '0'",
  );
  assert.match(
    refusal(() => parseIntegerOption("c", "--n", "9007199254740992")).message,
    /^--n must be at most 2\^53 - 1/,
  );
});

Deno.test("parseRate: one decimal form within [0, 1], the same for every command", () => {
  for (const [text, x] of [["0", 0], ["1", 1], ["0.25", 0.25], [".5", 0.5], ["1e-3", 0.001]]) {
    assert.equal(parseRate("c", "--rate", text as string), x, text as string);
  }
  for (const bad of ["", " 0.5", "+0.5", "-0.1", "0x1", "NaN", "Infinity", "abc", "1/2"]) {
    const r = refusal(() => parseRate("c", "--rate", bad));
    assert.equal(r.message, `--rate must be a number in [0, 1], got '${bad}'`);
    assert.equal(r.hint, "Run 'memprof-lab c --help' for usage.");
  }
  assert.equal(
    refusal(() => parseRate("c", "--rate", "1.5")).message,
    "--rate must be within [0, 1], got '1.5'",
  );
});

Deno.test("parseCommandArgs adds -h/--help; negative integers may be arguments", () => {
  const r = parseCommandArgs("trace x", ["a", "-h", "--limit", "2"], OPTIONS);
  assert.deepEqual(r.positionals, ["a"]);
  assert.equal(r.values.help, true);
  assert.equal(r.values.limit, "2");
  // By default -5 is an option, unknown: refused.
  assert.equal(refusal(() => parseCommandArgs("c", ["-5"], {})).message, "unknown option -5");
  const n = parseCommandArgs("c", ["in", "-5", "-1e3", "--", "-x", "\u00000"], {}, {
    negativeIntegers: "positional",
  });
  assert.deepEqual(n.positionals, ["in", "-5", "-1e3", "-x", "\u00000"]);
  // Anything else option-like is still refused.
  assert.equal(
    refusal(() => parseCommandArgs("c", ["-5x"], {}, { negativeIntegers: "positional" })).message,
    "unknown option -5",
  );
  const v = parseCommandArgs("c", ["--limit", "\u00001", "-2"], OPTIONS, {
    negativeIntegers: "positional",
  });
  assert.equal(v.values.limit, "\u00001");
  assert.deepEqual(v.positionals, ["-2"]);
});

Deno.test("argumentIndex finds the n-th argument past options and their values", () => {
  const argv = ["--limit", "3", "exec", "--json", "tool", "-g", "x"];
  assert.equal(argumentIndex(argv, OPTIONS, 0), 2);
  assert.equal(argumentIndex(argv, OPTIONS, 1), 4);
  assert.equal(argumentIndex(["--json"], OPTIONS, 0), undefined);
});
