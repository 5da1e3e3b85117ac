/**
 * Issue 22, bug 1: `sizes.geometric(1, max)` is p = 1: every draw is 1 and nothing is drawn from
 * the scenario's generator. The program once had `log1p(-1)` written as `(-infinity)`, which is
 * no OCaml float expression, and did not compile. The loop's size has `max` possible values, so
 * the program allocates it in a `match` (a switch) and the loop polls at its back-edge; a
 * geometric size of mean 3 after it checks that the generator was left untouched.
 */
import { keep, scenario, sizes } from "../../../lib/scenario/mod.ts";

export default scenario({
  name: "geometric_mean_one",
  description: "sizes.geometric with mean 1: every block is 1 word",
  minorHeapWords: 8_192,
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.1, callstackSize: 4 });
  main.repeat(3_000, () => main.alloc(sizes.geometric(1, 8), { lifetime: keep.ring(16) }));
  main.repeat(3_000, () => main.alloc(sizes.geometric(3, 8), { lifetime: keep.ring(16) }));
  main.memprof.stop();
});
