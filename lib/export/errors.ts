/**
 * The error a scenario that cannot be exported faithfully becomes.
 * @module
 */
import type { ExportRefusal, RefusalKind } from "./exportable.ts";

/** A scenario construct with no faithful OCaml form: names the scenario, the step and why. */
export class ExportError extends Error {
  /** Error class name. */
  override name = "ExportError";
  /** What is refused (undefined when the error was made without one). */
  readonly kind: RefusalKind | undefined;
  /** Every reason the scenario cannot be exported (`checkExportable`), this one first; just
   * this one when the error was made without them. */
  readonly refusals: readonly ExportRefusal[];
  /** Step `step` of scenario `scenario` cannot be exported, for `reason`. */
  constructor(
    /** The scenario's name. */
    readonly scenario: string,
    /** Position of the step (`3`, `3.2`, …), or `settings`. */
    readonly step: string,
    /** Why the step has no faithful OCaml form. */
    readonly reason: string,
    /** What is refused, and every refusal of the scenario. */
    more: { readonly kind?: RefusalKind; readonly refusals?: readonly ExportRefusal[] } = {},
  ) {
    super(
      `cannot export scenario ${scenario}, ${
        step === "settings" ? "settings" : `step ${step}`
      }: ${reason}`,
    );
    this.kind = more.kind;
    this.refusals = more.refusals ??
      (more.kind === undefined ? [] : [{ kind: more.kind, step, reason }]);
  }
}
