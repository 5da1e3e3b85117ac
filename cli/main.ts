/**
 * `memprof-lab` — the one command: `memprof-lab <command> …` runs the command of the same
 * `deno task` name (cli/<command>.ts) with the rest of the arguments.
 *
 *   deno task memprof-lab trace info ./prog.ctf
 *   deno install --global --config deno.json --allow-read --allow-write --allow-run --allow-env -n memprof-lab cli/main.ts
 *   memprof-lab scenario ref_loop --out ./out
 *
 * Paths on the command line resolve from the caller's directory. Exit status, for every
 * command: 0 ok, 1 failure, 2 wrong command line (see each command's --help for more).
 * @module
 */
import { exitStatusOf, UsageError, writeStdout } from "./_io.ts";
import { unknownCommandMessage } from "./_args.ts";

/** A command: its one-line summary and its entry point (arguments after its name → exit status). */
interface Command {
  readonly summary: string;
  readonly run: (args: string[]) => Promise<number>;
}

/** The commands, in the order of the help; each module is loaded only when its command runs. */
export const COMMANDS: Readonly<Record<string, Command>> = {
  scenario: {
    summary: "run scenarios in the simulated runtime; outputs, goldens (--check, --update)",
    run: async (args) => (await import("./scenario.ts")).run(args),
  },
  diff: {
    summary: "the differential suite: scenarios simulated and run on real OCaml 5.3",
    run: async (args) => (await import("./diff.ts")).run(args),
  },
  trace: {
    summary: "memtrace .ctf traces: dump, copy, info, memtrace's tools, top, diff, export",
    run: async (args) => (await import("./trace.ts")).run(args),
  },
  events: {
    summary: "runtime_events ring files: dump, stats, export, gc-stats, watch",
    run: async (args) => (await import("./events.ts")).run(args),
  },
  sampler: {
    summary: "memprof's sampling random numbers for one domain (reference format)",
    run: async (args) => (await import("./sampler.ts")).run(args),
  },
  ocaml: {
    summary: "the OCaml 5.3 toolchain real programs are compiled with: setup, status, exec",
    run: async (args) => (await import("./ocaml.ts")).runProcess(args),
  },
};

/** Usage text printed by --help. */
export const USAGE = `Usage: memprof-lab <command> [arguments]

Commands:
${Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)}${c.summary}`).join("\n")}

Run 'memprof-lab <command> --help' for a command's usage. Each command is also
'deno task <command>'. Paths given on the command line resolve from the current
directory.

Exit status, for every command: 0 ok, 1 failure (bad or unreadable input, a failed
check or run), 2 wrong command line (unknown command or option, missing argument);
'events watch' and 'ocaml setup' exit 130 when interrupted.

Options:
  -h, --help  show this help
`;

/** Runs `memprof-lab` with `args` (without the program name); returns the exit status. */
export async function run(args: string[]): Promise<number> {
  const [name, ...rest] = args;
  try {
    if (name === "-h" || name === "--help" || name === "help") {
      writeStdout(USAGE);
      return 0;
    }
    if (name === undefined) throw new UsageError("missing command", USAGE.trimEnd());
    const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
    if (command === undefined) {
      throw new UsageError(
        unknownCommandMessage(name, Object.keys(COMMANDS)),
        `commands: ${Object.keys(COMMANDS).join(", ")}; run 'memprof-lab --help'`,
      );
    }
    return await command.run(rest);
  } catch (e) {
    return exitStatusOf(e);
  }
}

if (import.meta.main) Deno.exit(await run(Deno.args));
