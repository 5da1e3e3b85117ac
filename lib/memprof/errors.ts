/**
 * The OCaml exceptions the simulated runtime raises and propagates (defined once, in
 * `lib/util/ocaml_exceptions.ts`, for every part of the project that models them).
 *
 * @module
 */

export {
  OCamlException,
  OCamlFailure,
  OCamlInvalidArgument,
  ThreadExit,
} from "../util/ocaml_exceptions.ts";
