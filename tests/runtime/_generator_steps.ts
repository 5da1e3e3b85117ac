/**
 * Counts generator steps: every generator object a path drives (by `runToEnd`, `yield*` or a
 * `for … of`) calls the generators' shared `next`, which this wraps while `f` runs.
 * @module
 */

const GeneratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf((function* () {})()));

/** The number of generator steps (`next` calls) `f` makes. */
export function generatorSteps(f: () => void): number {
  const next = GeneratorPrototype.next;
  let steps = 0;
  GeneratorPrototype.next = function (this: Generator, ...args: [unknown]) {
    steps++;
    return next.apply(this, args);
  };
  try {
    f();
  } finally {
    GeneratorPrototype.next = next;
  }
  return steps;
}
