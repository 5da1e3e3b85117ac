/**
 * A worker spawned and terminated while the main domain samples every word: its spawn, its
 * blocks' promotion at its last collection and where the main domain joins it are all race
 * points, and a real run combines their outcomes (100 real runs gave 8 to 10 distinct outcomes).
 * tests/differential/races_test.ts checks that `resolveRaces` reads back combined resolutions.
 */
import { scenario } from "../../lib/scenario/mod.ts";

export default scenario({ name: "terminate_sampling", seed: 5, minorHeapWords: 8_192 }, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 1, callstackSize: 12 });
  main.alloc(4);
  const w = main.spawn("w");
  w.repeat(3, () => w.alloc(5));
  main.alloc(6);
  w.terminate();
  main.alloc(2);
  main.memprof.stop();
});
