/**
 * A problem inside a callback's action (an action the runtime refuses, a thread that cannot take
 * the baton, …), raised where the step running the callback is not known: the step's guard turns
 * it into a `ScenarioError` naming the step and the action.
 * @module
 */

/** A callback action that failed: `within` names it as the validator does, e.g. `callback
 * allocMinor, act.start` (or, for an action of a profile a callback started, `callback
 * allocMinor, act.start, callback promote, act.stop`); empty until the action is known. */
export class ActionError extends Error {
  /** Error class name. */
  override name = "ActionError";
  /** `problem` in the action `within`. */
  constructor(
    /** What is wrong. */
    readonly problem: string,
    /** The action's path in the scenario. */
    readonly within: string = "",
  ) {
    super(within === "" ? problem : `${within}: ${problem}`);
  }
}
