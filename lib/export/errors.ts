/**
 * The error a scenario that cannot be exported faithfully becomes.
 * @module
 */

/** A scenario construct with no faithful OCaml form: names the scenario, the step and why. */
export class ExportError extends Error {
  /** Error class name. */
  override name = "ExportError";
  /** Step `step` of scenario `scenario` cannot be exported, for `reason`. */
  constructor(
    /** The scenario's name. */
    readonly scenario: string,
    /** Position of the step (`3`, `3.2`, …), or `settings`. */
    readonly step: string,
    /** Why the step has no faithful OCaml form. */
    readonly reason: string,
  ) {
    super(
      `cannot export scenario ${scenario}, ${
        step === "settings" ? "settings" : `step ${step}`
      }: ${reason}`,
    );
  }
}
