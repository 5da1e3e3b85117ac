/**
 * The simulated OCaml 5.3 runtime memprof runs in.
 *
 * @module
 */

export * from "./runtime.ts";
export * from "./events.ts";
