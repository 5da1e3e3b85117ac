/**
 * `memprof-lab ocaml` (`deno task ocaml`) — the OCaml 5.3 toolchain memprof-lab compiles real OCaml programs with.
 *
 *   memprof-lab ocaml setup [--prefix DIR] [--build] [--jobs N]
 *   memprof-lab ocaml status [--json]
 *   memprof-lab ocaml exec TOOL [ARG ...]
 *
 * @module
 */

import { printableLines } from "../lib/util/printable.ts";
import {
  type CacheStatus,
  type CommandRunner,
  findToolchain,
  OCAML_NPM_PACKAGE,
  OCAML_VERSION,
  PREFIX_ENV_VAR,
  setupToolchain,
  type ToolchainOptions,
  type ToolchainStatus,
  toolchainStatus,
} from "../lib/ocaml/mod.ts";
import { exitStatusOf, UsageError, writeStderr, writeStdout } from "./_io.ts";
import { commandName, helpHint, usageLines } from "./_usage.ts";
import {
  argumentIndex,
  parseCommandLine,
  parseIntegerOption,
  unknownCommandMessage,
} from "./_args.ts";
import { dirname, join } from "node:path";

/** Usage text printed by --help. */
export const USAGE = `${usageLines("ocaml", "<command> [options]", "exec [options] TOOL [ARG ...]")}

Manages the OCaml 5.3 toolchain memprof-lab compiles real OCaml programs with.

Commands:
  setup    build OCaml ${OCAML_VERSION} from the npm package ${OCAML_NPM_PACKAGE} into the cache
           (once: a second run says "already built"); takes a few minutes and needs
           gcc, make, npm and tar
  status   show the cache prefix and whether it is built, any OCaml of your own, and
           which toolchain would be used
  exec     run TOOL (ocamlopt, ocamlc, ocaml, ocamldep…) of the toolchain memprof-lab
           uses, with ARGs, and exit with its status: the toolchain 'setup' builds is not
           on PATH ('${commandName("ocaml exec")} ocamlopt -g x.ml -o x')

Options:
  --prefix DIR      cache prefix; default $XDG_CACHE_HOME/memprof-lab/ocaml-${OCAML_VERSION},
                    else ~/.cache/memprof-lab/ocaml-${OCAML_VERSION}; ${PREFIX_ENV_VAR}
                    overrides the default, --prefix overrides both
  --ocamlopt PATH   use this ocamlopt (must be OCaml 5.3.x) instead of a cache build
  --ocamlfind PATH  use 'PATH ocamlopt' (must be OCaml 5.3.x) instead of a cache build
  --build           setup: build into the default cache even if ocamlopt on PATH is 5.3.x
  --jobs N          setup: parallel make jobs (default: the number of CPUs)
  --wait SECONDS    setup: how long to wait for another setup building into the same
                    prefix (default 1800)
  --json            status: print the status as JSON
  -h, --help        show this help

Which toolchain is used: --ocamlopt/--ocamlfind; else the cache at --prefix or
${PREFIX_ENV_VAR}, if built; else the default cache, if built; else ocamlopt on
PATH, if OCaml 5.3.x. setup writes the full build output to PREFIX.build.log.

Exit status: 0 ok, 1 when the toolchain cannot be found, checked or built, 2 for a
wrong command line (this help on stderr when no command is given), 130 interrupted.
`;

/** What the command needs from the outside world (replaceable in tests). */
export interface OCamlCliIO {
  /** Writes text to standard output. */
  stdout(text: string): void;
  /** Writes text to standard error. */
  stderr(text: string): void;
  /** The environment (`HOME`, `XDG_CACHE_HOME`, `PATH`, `MEMPROF_LAB_OCAML_PREFIX`, …). */
  readonly env: Record<string, string | undefined>;
  /** Runs the build commands (default: real processes). */
  readonly runner?: CommandRunner;
  /** Interrupts a setup (Ctrl-C). */
  readonly signal?: AbortSignal;
  /** Runs a tool for `exec`, with the standard streams of this process; its exit status
   * (default: a real process; 128 + the signal's number when a signal ended it). */
  readonly exec?: (command: string, args: readonly string[]) => Promise<number>;
}

/** Runs `command args…` with this process's standard streams; its exit status. */
async function execInherited(command: string, args: readonly string[]): Promise<number> {
  const status = await new Deno.Command(command, {
    args: [...args],
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  return status.signal === null ? status.code : 128 + (SIGNAL_NUMBERS[status.signal] ?? 0);
}

/** Numbers of the signals that commonly end a tool, for its exit status (128 + N). */
const SIGNAL_NUMBERS: Partial<Record<Deno.Signal, number>> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGABRT: 6,
  SIGKILL: 9,
  SIGSEGV: 11,
  SIGPIPE: 13,
  SIGTERM: 15,
};

/** The real process: stdio and its environment. */
export function denoIO(signal?: AbortSignal): OCamlCliIO {
  return {
    stdout: writeStdout,
    stderr: writeStderr,
    env: Deno.env.toObject(),
    ...(signal !== undefined ? { signal } : {}),
  };
}

/** Width of the labels of the status text. */
const LABEL = "defaultCache: ".length;

function describeCache(label: string, c: CacheStatus): string[] {
  const how = c.source === "default"
    ? "default"
    : c.source === "env"
    ? `from ${PREFIX_ENV_VAR}`
    : "from --prefix";
  const out = [`${label.padEnd(LABEL)}${c.prefix} (${how})`];
  const pad = " ".repeat(LABEL);
  if (c.built) {
    const when = c.buildInfo ? `, built ${c.buildInfo.builtAt} in ${c.buildInfo.seconds} s` : "";
    out.push(`${pad}built: OCaml ${c.version}${when}`);
  } else if (c.problem !== undefined) {
    out.push(`${pad}problem: ${c.problem} (unusable)`);
  } else {
    out.push(`${pad}built: no (run '${commandName("ocaml setup")}')`);
  }
  if (c.buildingPid !== undefined) {
    out.push(`${pad}buildingPid: ${c.buildingPid} (a setup is building it now)`);
  }
  if (c.buildLog !== undefined) out.push(`${pad}buildLog: ${c.buildLog}`);
  return out;
}

/** The status as text, one fact per line, each labelled with its key in
 * {@linkcode ToolchainStatus} (what `status --json` prints). */
export function formatStatus(s: ToolchainStatus): string {
  const label = (key: keyof ToolchainStatus) => `${key}:`.padEnd(LABEL);
  const lines = [
    `${label("required")}OCaml ${s.required} (memprof-lab compiles real programs with it)`,
    `${label("pinned")}OCaml ${s.pinned}, what '${
      commandName("ocaml setup")
    }' builds from npm:${OCAML_NPM_PACKAGE}`,
    ...describeCache(label("cache"), s.cache),
    ...(s.defaultCache ? describeCache(label("defaultCache"), s.defaultCache) : []),
  ];
  if (s.user === undefined) {
    lines.push(`${label("user")}none (no ocamlopt on PATH)`);
  } else {
    const where = s.user.source === "PATH" ? "on PATH" : "given";
    const verdict = s.user.accepted
      ? `OCaml ${s.user.version}, accepted`
      : `refused: ${s.user.problem}`;
    lines.push(`${label("user")}${s.user.ocamlopt.join(" ")} (${where}): ${verdict}`);
  }
  lines.push(
    s.selected
      ? `${label("selected")}${s.selected.ocamlopt.join(" ")} (OCaml ${s.selected.version}, ${
        s.selected.origin === "cache" ? "cache build" : "your own"
      })`
      : `${label("selected")}nothing; run '${commandName("ocaml setup")}', or pass --ocamlopt PATH`,
  );
  return lines.join("\n") + "\n";
}

/** The options of every `ocaml` command. */
const OPTIONS = {
  prefix: { type: "string" },
  ocamlopt: { type: "string" },
  ocamlfind: { type: "string" },
  build: { type: "boolean" },
  jobs: { type: "string" },
  wait: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** The commands, for suggestions. */
const COMMANDS = ["setup", "status", "exec"];

/**
 * For `exec`, the command line split at the tool: this command's own arguments (options and
 * `exec`), then the tool and its arguments, passed on as they are (`exec ocamlopt -g x.ml` needs
 * no `--`). Undefined when the command is not `exec`.
 */
function splitExec(argv: string[]): { own: string[]; tool: string[] } | undefined {
  const command = argumentIndex(argv, OPTIONS, 0);
  if (command === undefined || argv[command] !== "exec") return undefined;
  const tool = argumentIndex(argv, OPTIONS, 1);
  if (tool === undefined) return { own: argv, tool: [] };
  return { own: argv.slice(0, tool), tool: argv.slice(tool) };
}

async function main(argv: string[], io: OCamlCliIO): Promise<number> {
  const exec = splitExec(argv);
  const { values, positionals } = parseCommandLine("ocaml", exec?.own ?? argv, {
    allowPositionals: true,
    options: OPTIONS,
  });
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  const [command, ...extra] = positionals;
  if (command === undefined) {
    throw new UsageError("missing command (setup, status or exec)", USAGE.trimEnd());
  }
  if (!COMMANDS.includes(command)) {
    throw new UsageError(unknownCommandMessage(command, COMMANDS));
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
  if (values.ocamlopt !== undefined && values.ocamlfind !== undefined) {
    throw new UsageError("give either --ocamlopt or --ocamlfind, not both");
  }
  const setupOnly = ["build", "jobs", "wait"] as const;
  const refused = command === "status"
    ? setupOnly
    : command === "exec"
    ? [...setupOnly, "json"] as const
    : ["json"] as const;
  for (const name of refused) {
    if (values[name] !== undefined) throw new UsageError(`--${name} does not apply to ${command}`);
  }
  const opts = {
    env: io.env,
    ...(values.prefix !== undefined ? { prefix: values.prefix } : {}),
    ...(values.ocamlopt !== undefined ? { ocamlopt: values.ocamlopt } : {}),
    ...(values.ocamlfind !== undefined ? { ocamlfind: values.ocamlfind } : {}),
  };

  if (command === "exec") return await execTool(exec?.tool ?? [], opts, io);

  if (command === "status") {
    const status = await toolchainStatus(opts);
    io.stdout(values.json ? JSON.stringify(status, null, 2) + "\n" : formatStatus(status));
    if (status.user?.source === "option" && !status.user.accepted) {
      io.stderr(
        `error: ${printableLines(`${status.user.ocamlopt.join(" ")}: ${status.user.problem}`)}\n`,
      );
      return 1;
    }
    return 0;
  }

  const jobs = parseIntegerOption("ocaml", "--jobs", values.jobs, { min: 1 });
  const wait = parseIntegerOption("ocaml", "--wait", values.wait, { min: 1 });
  const tc = await setupToolchain({
    ...opts,
    ...(values.build ? { build: true } : {}),
    ...(jobs !== undefined ? { jobs } : {}),
    ...(wait !== undefined ? { lockTimeoutMs: wait * 1000 } : {}),
    ...(io.runner !== undefined ? { runner: io.runner } : {}),
    ...(io.signal !== undefined ? { signal: io.signal } : {}),
    onProgress: (line) => io.stdout(line + "\n"),
  });
  io.stdout(`ocamlopt: ${tc.ocamlopt.join(" ")} (OCaml ${tc.version})\n`);
  return 0;
}

/** `exec TOOL ARG…`: runs TOOL of the toolchain `status` selects, with its exit status. The tool
 * is the one beside the selected ocamlopt (`<prefix>/bin/TOOL` for a cache build), or
 * `ocamlfind TOOL` when the toolchain is ocamlfind's. */
async function execTool(
  tool: readonly string[],
  opts: ToolchainOptions & { env: Record<string, string | undefined> },
  io: OCamlCliIO,
): Promise<number> {
  const [name, ...args] = tool;
  if (name === undefined) {
    throw new UsageError("exec needs a tool to run (such as ocamlopt)");
  }
  if (name.includes("/") || name === "." || name === "..") {
    throw new UsageError(
      `exec runs a tool of the toolchain by name (such as ocamlopt), got '${name}'`,
    );
  }
  const tc = await findToolchain(opts);
  if (tc === undefined) {
    io.stderr(
      `error: no OCaml ${OCAML_VERSION} toolchain found: run '${
        commandName("ocaml setup")
      }' (about 3 minutes), or give --prefix DIR or --ocamlopt PATH\n`,
    );
    return 1;
  }
  let command: string, commandArgs: string[];
  if (tc.ocamlopt.length > 1) {
    // ocamlfind's: `ocamlfind ocamlopt` becomes `ocamlfind TOOL`.
    [command, commandArgs] = [tc.ocamlopt[0], [name, ...args]];
  } else {
    command = join(dirname(tc.ocamlopt[0]), name);
    commandArgs = args;
    try {
      Deno.statSync(command);
    } catch {
      io.stderr(`error: no ${name} beside ${tc.ocamlopt[0]} (OCaml ${tc.version})\n`);
      return 1;
    }
  }
  return await (io.exec ?? execInherited)(command, commandArgs);
}

/**
 * Runs `ocaml` with `argv` (without the program name) and returns the exit status: 0 on success,
 * 1 when the toolchain cannot be found, checked or built, 2 for usage errors.
 */
export async function run(argv: string[], io: OCamlCliIO = denoIO()): Promise<number> {
  try {
    return await main(argv, io);
  } catch (e) {
    return exitStatusOf(e, io.stderr, helpHint("ocaml"));
  }
}

/**
 * {@linkcode run} for the real process: Ctrl-C (or SIGTERM) interrupts a setup cleanly (the
 * running step is killed and the temporary build directory removed; exit status 130); a second
 * Ctrl-C exits at once.
 */
export async function runProcess(argv: string[]): Promise<number> {
  const ac = new AbortController();
  const onSignal = () => {
    if (ac.signal.aborted) Deno.exit(130);
    ac.abort();
  };
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? [] : ["SIGINT", "SIGTERM"];
  for (const s of signals) Deno.addSignalListener(s, onSignal);
  try {
    const code = await run(argv, denoIO(ac.signal));
    return ac.signal.aborted && code !== 0 ? 130 : code;
  } finally {
    for (const s of signals) Deno.removeSignalListener(s, onSignal);
  }
}

if (import.meta.main) Deno.exit(await runProcess(Deno.args));
