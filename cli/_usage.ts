/**
 * How the help texts name a command: as typed through the one CLI, `memprof-lab <command> …`,
 * saying once that `deno task <command> …` (from a checkout) is the same.
 * @module
 */

/** The one command's name (cli/main.ts, installed with `deno install … -n memprof-lab`). */
export const PROGRAM = "memprof-lab";

/** `memprof-lab <command>`: how help texts and hints name a command. */
export function commandName(command: string): string {
  return `${PROGRAM} ${command}`;
}

/**
 * The usage lines that open a help text: each form of `command` (its words after the
 * program name, such as `trace dump`) as typed through `memprof-lab`, then one line saying
 * that the `deno task` of the same name is the same command.
 *
 * ```
 * Usage: memprof-lab trace dump FILE [--no-backtraces]
 *        (from a checkout, 'deno task trace dump …' is the same)
 * ```
 */
export function usageLines(command: string, ...forms: string[]): string {
  const lines = forms.map((form, k) =>
    `${k === 0 ? "Usage:" : "      "} ${commandName(command)}${form === "" ? "" : ` ${form}`}`
  );
  lines.push(`       (from a checkout, 'deno task ${command} …' is the same)`);
  return lines.join("\n");
}

/** The hint after a usage error: where the command's help is. */
export function helpHint(command: string): string {
  return `Run '${commandName(command)} --help' for usage.`;
}
