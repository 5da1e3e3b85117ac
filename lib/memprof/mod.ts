/**
 * A port of OCaml 5.3's memprof.c (`Gc.Memprof`).
 *
 * @module
 */

export * from "./memprof.ts";
export * from "./entries.ts";
export * from "./profile.ts";
export * from "./errors.ts";
export * from "./invariants.ts";
export { MemprofRng, oneLog1mLambda } from "./rng.ts";
