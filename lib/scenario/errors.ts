/**
 * The error every scenario problem becomes: it names the scenario, the step and the problem.
 * @module
 */

/** An invalid scenario (found while building or validating), or a step that failed while
 * running. */
export class ScenarioError extends Error {
  /** Error class name. */
  override name = "ScenarioError";
  /** An error about step `step` of scenario `scenario`: `scenario NAME, step 3: problem`, or
   * with `within`, what inside the step is wrong: `scenario NAME, step 3, callback allocMinor,
   * act.start: problem`. */
  constructor(
    /** The scenario's name. */
    readonly scenario: string,
    /** Position of the step (`3`, `3.2` inside a repeat, …), or `settings`. */
    readonly step: string,
    /** What is wrong. */
    readonly problem: string,
    /** Where inside the step (or the settings) the problem is: `callback allocMinor, act.start`;
     * empty when it is the step itself. */
    readonly within: string = "",
  ) {
    super(
      `scenario ${scenario}, ${step === "settings" ? "settings" : `step ${step}`}${
        within === "" ? "" : `, ${within}`
      }: ${problem}`,
    );
  }
}
