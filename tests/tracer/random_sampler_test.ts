// OCaml's Random (LXM, MD5 seeding) and memtrace's external-allocation sampler, checked against
// reference outputs from OCaml 5.3's testsuite (lib-random) and memtrace's test/geom_sampler.
import assert from "node:assert/strict";
import { GeometricSampler, logApproxDouble, OCamlRandomState } from "../../lib/tracer/mod.ts";

Deno.test("LXM from a known state gives OCaml's test vectors (testvectors.reference)", () => {
  const s = new OCamlRandomState(1n, 2n, 3n, 4n);
  const want = [
    3860816457867857678n,
    21223322560256856n,
    3500884966496404595n,
    1500794501795755166n,
    -4410813772481188553n,
    -4572900151748500348n,
    4265851130944421541n,
    7572018898959715966n,
    -2937174041541593693n,
    -1802830867415637455n,
  ];
  assert.deepEqual(want.map(() => s.bits64()), want);
});

Deno.test("Random.State.make [|314159265|] is OCaml's default state (MD5 seeding)", () => {
  assert.deepEqual(OCamlRandomState.make([314159265]).words(), [
    -6196874289567705097n,
    586573249833713189n,
    -8591268803865043407n,
    6388613595849772044n,
  ]);
});

Deno.test("Random.int 1000 from the default state (defaultinit.reference)", () => {
  const s = OCamlRandomState.make([314159265]);
  const got = Array.from({ length: 21 }, () => s.int(1000)).join(" ");
  assert.equal(
    got,
    "754 262 510 865 996 861 495 37 283 434 98 495 144 34 806 28 180 58 416 138 654",
  );
});

Deno.test("memtrace's geom_sampler test prints its expected output", () => {
  // The program of memtrace's test/geom_sampler.ml: draw gaps until 100,000 is used up.
  const fmt = (x: number) => x.toFixed(2);
  const lines = [0.01, 0.13, 0.42, 0.73, 1].map((rate) => {
    const t = new GeometricSampler(rate);
    const total = 100_000;
    let s = total, n = 0, n3 = 0;
    for (;;) {
      const k = t.draw();
      s -= k;
      if (s < 0) break;
      n++;
      if (k === 3) n3++;
    }
    const p3 = (1 - rate) * (1 - rate) * rate;
    return `sample rate: ${fmt(rate)} (${fmt(n / total)}), P(X = 3): ${fmt(p3)} (${fmt(n3 / n)})`;
  });
  assert.deepEqual(lines, [
    "sample rate: 0.01 (0.01), P(X = 3): 0.01 (0.01)",
    "sample rate: 0.13 (0.13), P(X = 3): 0.10 (0.10)",
    "sample rate: 0.42 (0.42), P(X = 3): 0.14 (0.14)",
    "sample rate: 0.73 (0.73), P(X = 3): 0.05 (0.05)",
    "sample rate: 1.00 (1.00), P(X = 3): 0.00 (0.00)",
  ]);
});

Deno.test("geometric gaps have mean 1/rate within 5 standard errors (fixed seed)", () => {
  for (const rate of [1e-4, 0.01, 0.3]) {
    const t = new GeometricSampler(rate);
    const n = 200_000;
    let sum = 0;
    for (let i = 0; i < n; i++) sum += t.draw();
    const mean = 1 / rate, sd = Math.sqrt(1 - rate) / rate;
    const err = Math.abs(sum / n - mean) / (sd / Math.sqrt(n));
    // log_approx's error shifts the mean by well under a standard error at these n.
    assert.ok(err < 5, `rate ${rate}: mean ${sum / n}, expected ${mean} (${err.toFixed(2)} SE)`);
  }
});

Deno.test("log_approx in double precision tracks log2-scaled logarithms", () => {
  // log_approx(n) ≈ log((2n+1) / 2^31); its cubic fit of log on [1, 2) is good to about 7e-4.
  for (const n of [0, 1, 2, 3, 1000, 123456789, 0x3fffffff]) {
    const exact = Math.log((2 * n + 1) / 2 ** 31);
    assert.ok(Math.abs(logApproxDouble(n) - exact) < 1e-3, `n=${n}`);
  }
});
