/**
 * Loading a command's modules when the command runs. A literal `import("./x.ts")` would not
 * do: `deno run` reads every module such an import can reach before the program starts (a
 * quarter of a second for the trace commands on a loaded machine). So the specifier is a URL
 * made at run time, and the module's type comes from `typeof import("./x.ts")`, which
 * `deno check` follows. Loading a module file needs read permission, as every trace command
 * does.
 * @module
 */

/** The module at `url` (made with `new URL(path, import.meta.url)`), typed as `M`. */
export function load<M>(url: URL): Promise<M> {
  return import(url.href);
}
