/**
 * memprof's sampling RNG (lib/memprof/rng.ts) against the C reference: the fixture files in
 * tests/fixtures/rng (made from memprof.c's own functions, gcc -O2, x86-64), extra reference
 * outputs for edge cases, both batch kernels, the CLI, the %.17g formatter, the glibc-exact
 * log1p, and statistical checks with stated bounds.
 */
import { mulberry32 as uniform } from "../prng.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  fma,
  geomToBigInt,
  isMinLambda,
  log1p,
  LOG_APPROX_C0,
  LOG_APPROX_C1,
  LOG_APPROX_C2,
  LOG_APPROX_C3,
  LOG_APPROX_LN2,
  logApprox,
  MAX_LONG,
  MAX_LONG_NUMBER,
  MemprofRng,
  MIN_ONE_LOG1M_LAMBDA,
  oneLog1mLambda,
  RAND_BLOCK_SIZE,
  seedLanes,
} from "../../lib/memprof/rng.ts";
import {
  DEFAULT_BINOM_LENGTHS,
  formatG,
  formatRngReference,
} from "../../lib/memprof/rng_reference.ts";
import { main as samplerMain, USAGE } from "../../cli/sampler.ts";
import { createWasmBatchKernelWith } from "../../lib/memprof/rng_wasm.ts";

import fx1e5 from "../fixtures/rng/domain0_lambda0.00001.txt" with { type: "text" };
import fx1e4 from "../fixtures/rng/domain0_lambda0.0001.txt" with { type: "text" };
import fx1e2 from "../fixtures/rng/domain0_lambda0.01.txt" with { type: "text" };
import fx05 from "../fixtures/rng/domain0_lambda0.5.txt" with { type: "text" };

const FIXTURES: Record<string, string> = {
  "domain0_lambda0.00001.txt": fx1e5,
  "domain0_lambda0.0001.txt": fx1e4,
  "domain0_lambda0.01.txt": fx1e2,
  "domain0_lambda0.5.txt": fx05,
};

const BACKENDS = ["wasm-simd", "ts"] as const;

/** Domain id and lambda from a reference file's header line. */
function header(text: string): { domain: bigint; lambda: number } {
  const m = /^domain (\d+) lambda (\S+) one_log1m_lambda (\S+)\n/.exec(text);
  assert.ok(m, "header line");
  return { domain: BigInt(m[1]), lambda: Number(m[2]) };
}

function capture(args: string[]): { code: number; out: string; err: string } {
  let out = "", err = "";
  const code = samplerMain(args, { stdout: (s) => out += s, stderr: (s) => err += s });
  return { code, out, err };
}

// ---------------------------------------------------------------------------------------------
// The reference files

Deno.test("rng fixtures: the fixture list covers tests/fixtures/rng (when readable)", () => {
  // Without --allow-read (bare `deno test`) the static imports above are all we can see.
  const dir = new URL("../fixtures/rng/", import.meta.url);
  if (Deno.permissions.querySync({ name: "read", path: dir }).state !== "granted") return;
  const names = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".txt"));
  assert.deepEqual(names.sort(), Object.keys(FIXTURES).sort());
});

for (const [name, text] of Object.entries(FIXTURES)) {
  for (const backend of BACKENDS) {
    Deno.test(`rng fixtures: ${name} line by line and byte for byte (${backend})`, () => {
      const { domain, lambda } = header(text);
      const [l1, l2, l3] = text.split("\n");
      const o = oneLog1mLambda(lambda);

      // Line 1: lambda and one_log1m_lambda as %.17g.
      assert.equal(`domain ${domain} lambda ${formatG(lambda)} one_log1m_lambda ${formatG(o)}`, l1);

      // Line 2: 200 raw rand_geom values from a freshly seeded domain.
      const want = l2.split(" ");
      assert.equal(want[0], "geom");
      assert.equal(want.length - 1, 200);
      const g = new MemprofRng(domain, undefined, { backend });
      assert.equal(g.backend, backend);
      const got = want.slice(1).map(() => geomToBigInt(g.geom(o)).toString());
      assert.deepEqual(got, want.slice(1));

      // Line 3: rand_binom(LEN) in order after rand_init on a second fresh domain.
      const b = new MemprofRng(domain, o, { backend });
      const pairs = l3.split(" ").slice(1).map((p) => p.split(":").map(Number));
      assert.deepEqual(pairs.map(([len]) => len), [...DEFAULT_BINOM_LENGTHS]);
      for (const [len, samples] of pairs) assert.equal(b.binom(len, o), samples, `binom ${len}`);

      // The whole text, as the CLI prints it.
      assert.equal(
        formatRngReference(domain, lambda, 200, DEFAULT_BINOM_LENGTHS, { backend }),
        text,
      );
    });
  }
  Deno.test(`rng fixtures: deno task sampler reproduces ${name}`, () => {
    const { domain, lambda } = header(text);
    // The rate as written in the file name, so parsing is exercised too.
    const rate = /lambda([0-9.]+)\.txt$/.exec(name)![1];
    const r = capture(["--domain", String(domain), "--rate", rate, "--count", "200"]);
    assert.deepEqual(r, { code: 0, out: text, err: "" });
    assert.equal(Number(rate), lambda);
  });
}

// Further outputs of the same C reference (memprof.c's RNG functions compiled with gcc -O2 on the
// fixtures' machine, printing the fixture format), for cases the fixture files do not reach.
const C_REFERENCE: { args: [bigint, number, number, (number | bigint)[]]; text: string }[] = [
  {
    // lambda = 1: one_log1m_lambda = 0, every variate is 1, every word is sampled.
    args: [1n, 1, 10, [...DEFAULT_BINOM_LENGTHS]],
    text: "domain 1 lambda 1 one_log1m_lambda 0\n" +
      "geom 1 1 1 1 1 1 1 1 1 1\n" +
      "binom 1:1 2:2 3:3 7:7 16:16 100:100 256:256 1000:1000 5000:5000 100000:100000 1:1 1:1 1:1 " +
      "1000000:1000000\n",
  },
  {
    // A finite double that is −inf in float32: every variate is capped at Max_long, and
    // next_rand_geom goes far beyond 2^53 (exact BigInt path), even wrapping past Max_long.
    args: [3n, 1e-300, 3, [1, 4611686018427387902n, 5]],
    text: "domain 3 lambda 1e-300 one_log1m_lambda -9.999999999999999e+299\n" +
      "geom 4611686018427387903 4611686018427387903 4611686018427387903\n" +
      "binom 1:0 4611686018427387902:1 5:0\n",
  },
  {
    // Two batches (130 > 64 variates).
    args: [7n, 0.001, 130, [...DEFAULT_BINOM_LENGTHS]],
    text: "domain 7 lambda 0.001 one_log1m_lambda -999.49991662497359\n" +
      "geom 1007 1164 410 635 4418 19 1823 524 285 2871 2226 2471 1125 514 1245 508 1514 1037 " +
      "482 2037 781 2355 3083 1640 1777 19 5764 49 2252 248 2083 329 385 171 308 258 2300 " +
      "12044 548 1149 231 4192 618 284 1128 415 1730 2752 391 890 1002 1963 1131 64 2797 1384 " +
      "2257 391 2238 356 85 1011 2849 84 712 141 807 205 299 375 113 55 65 2125 322 1877 41 41 " +
      "1105 822 1355 266 373 1111 1414 1407 1379 4076 203 1461 627 573 481 192 1278 91 1038 435 " +
      "575 920 315 1310 79 446 1184 1774 379 964 1279 645 75 326 1061 456 358 1520 542 3780 " +
      "3145 130 298 2492 1954 573 441 478 161 266 1691 1729\n" +
      "binom 1:0 2:0 3:0 7:0 16:0 100:0 256:0 1000:1 5000:3 100000:80 1:0 1:0 1:0 1000000:1003\n",
  },
  {
    // The largest seed (uint64 max) and a zero length.
    args: [18446744073709551615n, 0.3, 70, [5, 0, 12, 100]],
    text: "domain 18446744073709551615 lambda 0.29999999999999999 " +
      "one_log1m_lambda -2.8036732520571293\n" +
      "geom 12 6 6 4 7 1 2 3 1 6 3 4 1 1 1 1 1 5 4 2 1 2 7 3 4 4 4 4 1 4 2 7 4 2 2 2 6 5 8 6 11 " +
      "2 1 2 1 1 1 1 3 3 5 8 7 1 8 1 2 10 9 4 2 3 1 5 4 3 6 4 1 8\n" +
      "binom 5:0 0:0 12:1 100:31\n",
  },
  {
    // Variates between 2^53 and 2^62: exact float32 integers, printed in full.
    args: [5n, 1e-18, 5, [...DEFAULT_BINOM_LENGTHS]],
    text: "domain 5 lambda 1.0000000000000001e-18 one_log1m_lambda -9.9999999999999987e+17\n" +
      "geom 938110330205110272 1810867338522656768 3107314967850778624 478744508243116032 " +
      "1495483423211388928\n" +
      "binom 1:0 2:0 3:0 7:0 16:0 100:0 256:0 1000:0 5000:0 100000:0 1:0 1:0 1:0 1000000:0\n",
  },
  {
    args: [9n, 0.999999, 10, [3, 1, 4]],
    text: "domain 9 lambda 0.99999899999999997 one_log1m_lambda -0.072382413650692631\n" +
      "geom 1 1 1 1 1 1 1 1 1 1\n" +
      "binom 3:3 1:1 4:4\n",
  },
  {
    // The smallest subnormal: 1/log1p(-λ) overflows to −inf, sampling is off.
    args: [4n, 5e-324, 3, [1]],
    text: "domain 4 lambda 4.9406564584124654e-324 one_log1m_lambda -inf\n" +
      "sampling off (min lambda)\n",
  },
  {
    args: [4n, 2.5e-39, 3, [1]],
    text: "domain 4 lambda 2.4999999999999999e-39 one_log1m_lambda -3.9999999999999999e+38\n" +
      "geom 4611686018427387903 4611686018427387903 4611686018427387903\n" +
      "binom 1:0\n",
  },
];

for (const { args, text } of C_REFERENCE) {
  for (const backend of BACKENDS) {
    Deno.test(`rng C reference: domain ${args[0]} lambda ${args[1]} (${backend})`, () => {
      assert.equal(formatRngReference(...args, { backend }), text);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Edge cases of lambda

Deno.test("rng edge: lambda 0 means no sampling (one_log1m_lambda = -inf, init draws nothing)", () => {
  const o = oneLog1mLambda(0);
  assert.equal(o, -Infinity);
  assert.equal(o, MIN_ONE_LOG1M_LAMBDA);
  assert.ok(isMinLambda(o));
  const r = new MemprofRng(0);
  r.nextRandGeom = 12345;
  r.init(o); // rand_init with a min-lambda config: only the batch is discarded
  assert.equal(r.nextRandGeom, 12345);
  assert.equal(r.buffered, 0);
  assert.equal(
    formatRngReference(0, 0),
    "domain 0 lambda 0 one_log1m_lambda -inf\nsampling off (min lambda)\n",
  );
  assert.equal(capture(["--rate", "0"]).out, formatRngReference(0, 0));
});

Deno.test("rng edge: lambda 1 samples every word", () => {
  const o = oneLog1mLambda(1);
  assert.ok(Object.is(o, 0)); // exactly +0, not 1/log1p(-1) = -0
  assert.ok(!isMinLambda(o));
  for (const backend of BACKENDS) {
    const r = new MemprofRng(77, o, { backend });
    assert.equal(r.nextRandGeom, 0); // rand_geom − 1 with rand_geom = 1
    for (let i = 0; i < 300; i++) assert.equal(r.geom(o), 1);
    for (const len of [0, 1, 2, 255, 256, 4096]) assert.equal(r.binom(len, o), len);
    assert.equal(r.nextRandGeom, 0);
  }
});

Deno.test("rng edge: tiny lambdas — overflow to -inf, float32 overflow to Max_long, exact BigInt", () => {
  // 1/log1p(-λ) overflows the double range below ~5.6e-309.
  for (const l of [5e-324, 1e-320, 5e-309]) assert.equal(oneLog1mLambda(l), -Infinity);
  // Finite as a double, −inf as a float32: every variate is Max_long.
  const o = oneLog1mLambda(1e-300);
  assert.ok(Number.isFinite(o) && o < -3.5e38);
  for (const backend of BACKENDS) {
    const r = new MemprofRng(3, o, { backend });
    assert.equal(r.nextRandGeomExact, MAX_LONG - 1n);
    assert.equal(r.nextRandGeom, Number(MAX_LONG - 1n));
    for (let i = 0; i < 70; i++) assert.equal(r.geom(o), MAX_LONG_NUMBER);
    assert.equal(geomToBigInt(MAX_LONG_NUMBER), MAX_LONG);
    assert.equal(r.binom(1_000_000, o), 0);
    assert.equal(r.nextRandGeomExact, MAX_LONG - 1n - 1_000_000n);
    // Lengths as bigint, and the sum past 2^63 that uintnat arithmetic allows.
    assert.equal(r.binom(MAX_LONG - 1n, o), 1);
    assert.equal(r.nextRandGeomExact, 2n * MAX_LONG - 1_000_001n - (MAX_LONG - 1n));
  }
  assert.throws(() => new MemprofRng(0).binom(MAX_LONG, -1), RangeError);
});

Deno.test("rng edge: invalid lambdas and one_log1m_lambda values are rejected", () => {
  for (const l of [-0.1, 1.0000001, NaN, Infinity, -Infinity]) {
    assert.throws(() => oneLog1mLambda(l), RangeError);
  }
  const r = new MemprofRng(0);
  for (const o of [NaN, 0.5, Infinity]) assert.throws(() => r.geom(o), RangeError);
  assert.throws(() => new MemprofRng(1.5), RangeError);
  assert.throws(() => (r.nextRandGeom = -1), RangeError);
  assert.throws(() => (r.nextRandGeom = 0.5), RangeError);
  assert.throws(() => (r.nextRandGeomExact = 1n << 64n), RangeError);
});

// ---------------------------------------------------------------------------------------------
// Structure: seeding, batches, init, binom

Deno.test("rng structure: splitmix64 seeding (known first values) and uint64 cast of the seed", () => {
  // splitmix64 from state 0: the first output is 0xe220a8397b1dcdaf, the second 0x6e789e6aa1b965f4.
  const lanes = seedLanes(0);
  assert.equal(lanes[0] >>> 0, 0x7b1dcdaf);
  assert.equal(lanes[64] >>> 0, 0xe220a839);
  assert.equal(lanes[128] >>> 0, 0xa1b965f4);
  assert.equal(lanes[192] >>> 0, 0x6e789e6a);
  // A negative id is cast to uint64 like the C's (uint64_t)id.
  assert.deepEqual(seedLanes(-1), seedLanes(18446744073709551615n));
  assert.equal(new MemprofRng(-1).domainId, 18446744073709551615n);
});

Deno.test("rng structure: a batch is 64 variates; the factor is read at refill time only", () => {
  const a = oneLog1mLambda(0.01), b = oneLog1mLambda(0.5);
  for (const backend of BACKENDS) {
    const mixed = new MemprofRng(11, undefined, { backend });
    const onlyA = new MemprofRng(11, undefined, { backend });
    const onlyB = new MemprofRng(11, undefined, { backend });
    const va = Array.from({ length: 128 }, () => onlyA.geom(a));
    const vb = Array.from({ length: 128 }, () => onlyB.geom(b));
    // First batch computed with a: switching to b mid-batch changes nothing until the refill.
    const got = [
      ...Array.from({ length: 10 }, () => mixed.geom(a)),
      ...Array.from({ length: 54 }, () => mixed.geom(b)),
    ];
    assert.equal(mixed.buffered, 0);
    got.push(...Array.from({ length: 64 }, () => mixed.geom(b)));
    assert.deepEqual(got, [...va.slice(0, 64), ...vb.slice(64)]);
  }
});

Deno.test("rng structure: init discards the batch and continues the stream (no reseeding)", () => {
  const o = oneLog1mLambda(0.01);
  const r = new MemprofRng(5);
  r.init(o);
  const first = r.nextRandGeom;
  r.geom(o);
  r.init(o); // a second profile on the same domain
  const second = r.nextRandGeom;
  assert.equal(r.buffered, RAND_BLOCK_SIZE - 1);
  // The same values from a plain stream: variate 1 and variate 65 (first of the second batch).
  const s = new MemprofRng(5);
  const stream = Array.from({ length: 65 }, () => s.geom(o));
  assert.equal(first, stream[0] - 1);
  assert.equal(second, stream[64] - 1);
  assert.notEqual(first, second);
  // init(null) (no config) only discards the batch.
  r.init(null);
  assert.equal(r.nextRandGeom, second);
  assert.equal(r.buffered, 0);
  // The constructor's second argument runs init, like caml_memprof_new_domain.
  assert.equal(new MemprofRng(5, o).nextRandGeom, first);
});

Deno.test("rng property: binom equals rand_binom's definition over a twin stream", () => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
      fc.double({ min: 1e-6, max: 1, noNaN: true }),
      fc.array(fc.integer({ min: 0, max: 5000 }), { maxLength: 40 }),
      fc.constantFrom(...BACKENDS),
      (domain, lambda, lens, backend) => {
        const o = oneLog1mLambda(lambda);
        const r = new MemprofRng(domain, o, { backend });
        const twin = new MemprofRng(domain, undefined, { backend: "ts" });
        let next = twin.geom(o) - 1; // rand_init
        for (const len of lens) {
          let res = 0;
          for (; next < len; res++) next += twin.geom(o);
          next -= len;
          assert.equal(r.binom(len, o), res);
          assert.equal(r.nextRandGeom, next);
        }
      },
    ),
    { numRuns: 150 },
  );
});

Deno.test("rng: binom stays exact when a run of gaps crosses 2^53 within a batch", () => {
  // At λ = 1e-15 the gaps are about 1e15: a few of them pass 2^53, in the four-at-a-time sums
  // and in the one-at-a-time loop alike.
  for (const backend of BACKENDS) {
    for (const lambda of [1e-15, 3e-16, 1e-12]) {
      const o = oneLog1mLambda(lambda);
      const r = new MemprofRng(7, o, { backend });
      const twin = new MemprofRng(7, undefined, { backend: "ts" });
      let next = geomToBigInt(twin.geom(o)) - 1n; // rand_init
      for (const len of [2 ** 53 - 1, 2 ** 52, 12_345, 2 ** 53 - 1, 2 ** 50 + 3]) {
        let res = 0;
        for (; next < BigInt(len); res++) next += geomToBigInt(twin.geom(o));
        next -= BigInt(len);
        assert.equal(r.binom(len, o), res, `λ=${lambda} len=${len}`);
        assert.equal(r.nextRandGeomExact, next);
      }
    }
  }
});

Deno.test("rng property: the WebAssembly SIMD and TypeScript kernels agree bit for bit", () => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
      fc.oneof(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 1e-45, max: 1e-30, noNaN: true }),
      ),
      (domain, lambda) => {
        const o = oneLog1mLambda(lambda);
        if (isMinLambda(o)) return;
        const w = new MemprofRng(domain, undefined, { backend: "wasm-simd" });
        const t = new MemprofRng(domain, undefined, { backend: "ts" });
        for (let i = 0; i < 3 * RAND_BLOCK_SIZE; i++) assert.equal(w.geom(o), t.geom(o));
      },
    ),
    { numRuns: 100 },
  );
});

Deno.test("rng property: every unroll factor of the wasm kernel gives the TypeScript batches", () => {
  const constants = {
    c0: LOG_APPROX_C0,
    c1: LOG_APPROX_C1,
    c2: LOG_APPROX_C2,
    c3: LOG_APPROX_C3,
    ln2: LOG_APPROX_LN2,
  };
  for (const lambda of [1e-5, 0.01, 0.5, 1, 1e-300]) {
    const o = oneLog1mLambda(lambda);
    const ref = new MemprofRng(123, undefined, { backend: "ts" });
    const want = Array.from({ length: 5 * RAND_BLOCK_SIZE }, () => ref.geom(o));
    for (const unroll of [1, 2, 4, 8, 16]) {
      const k = createWasmBatchKernelWith(constants, unroll);
      assert.ok(k, "WebAssembly SIMD available");
      seedLanes(123, k.lanes);
      const got: number[] = [];
      for (let b = 0; b < 5; b++) {
        k.refill(o);
        got.push(...k.out);
      }
      assert.deepEqual(got, want, `λ=${lambda} unroll=${unroll}`);
    }
  }
});

// ---------------------------------------------------------------------------------------------
// Arithmetic pieces

Deno.test("rng arithmetic: log_approx's float32 constants have the C literals' bits", () => {
  const bitsOf = (f: number) => new Uint32Array(new Float32Array([f]).buffer)[0];
  assert.equal(bitsOf(LOG_APPROX_C0), 0xc2df6748);
  assert.equal(bitsOf(LOG_APPROX_C1), 0x4006b2be);
  assert.equal(bitsOf(LOG_APPROX_C2), 0xbf38714e);
  assert.equal(bitsOf(LOG_APPROX_C3), 0x3ddb680e);
  assert.equal(bitsOf(LOG_APPROX_LN2), 0x3f317218);
});

Deno.test("rng arithmetic: log_approx is negative and within 1e-3 of log((y+0.5)/2^32)", () => {
  const ys = [0, 1, 2, 3, 0x7fffff, 0x800000, 0x800001, 0xffffff, 0x1000001, 2 ** 31, 2 ** 32 - 1];
  const rand = uniform(1);
  for (let i = 0; i < 2000; i++) ys.push(Math.floor(rand() * 2 ** 32));
  for (const y of ys) {
    const l = logApprox(y);
    assert.ok(l < 0, `log_approx(${y}) = ${l}`);
    assert.equal(Math.fround(l), l);
    // The design comment's bound is ~7e-4 absolute, plus float32 rounding of values up to ~22.
    assert.ok(Math.abs(l - Math.log((y + 0.5) / 2 ** 32)) < 1e-3, `y = ${y}`);
  }
});

Deno.test("rng arithmetic: %.17g formatting as glibc prints it", () => {
  const cases: [number, string][] = [
    [0, "0"],
    [-0, "-0"],
    [1, "1"],
    [0.01, "0.01"],
    [1e-5, "1.0000000000000001e-05"],
    [1e-4, "0.0001"],
    [0.5, "0.5"],
    [-99.49916247342216, "-99.49916247342216"],
    [-99999.49999916666, "-99999.499999166655"],
    [1e16, "10000000000000000"],
    [1e17, "1e+17"],
    [2 ** 60, "1.152921504606847e+18"],
    [1e21, "1e+21"],
    [1e-300, "1e-300"],
    [1e-5 + 2 ** -70, "1.0000000000000003e-05"],
    [5e-324, "4.9406564584124654e-324"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
    [1000000000000000.2, "1000000000000000.2"], // exactly ….25: a tie, rounded to even
    [1000000000000000.8, "1000000000000000.8"], // exactly ….75: a tie, rounded to even
    [0.1 + 0.2, "0.30000000000000004"],
    [Infinity, "inf"],
    [-Infinity, "-inf"],
    [NaN, "nan"],
  ];
  for (const [x, s] of cases) assert.equal(formatG(x), s, String(x));
  assert.equal(formatG(1 / 3, 6), "0.333333");
  assert.equal(formatG(123456789, 6), "1.23457e+08");
});

Deno.test("rng arithmetic: log1p and 1/log1p(-λ) equal the reference libm's bits", () => {
  // (x, log1p(x)) from glibc 2.36 on the fixtures' machine, where V8's Math.log1p differs.
  const glibc: [number, number][] = [
    [-0.065756124617499467, -0.068017766289623777],
    [-0.70729817275451623, -1.2286008425792052],
    [-0.38847215209933705, -0.491794784580043],
  ];
  for (const [x, y] of glibc) assert.equal(log1p(x), y);
  // and the one_log1m_lambda digits the C reference printed for those lambdas
  assert.equal(formatG(oneLog1mLambda(0.065756124617499467)), "-14.702041165861568");
  assert.equal(formatG(oneLog1mLambda(0.70729817275451623)), "-0.81393400146193717");
  assert.equal(formatG(oneLog1mLambda(0.38847215209933705)), "-2.0333684523595088");
  // Special values.
  assert.equal(log1p(-1), -Infinity);
  assert.ok(Number.isNaN(log1p(-2)));
  assert.ok(Object.is(log1p(-0), -0));
  assert.equal(log1p(Infinity), Infinity);
  assert.equal(log1p(1e-300), 1e-300);
  // Accuracy: within 1 ulp-ish of the true value across the range used (relative 2.3e-16).
  const rand = uniform(2);
  for (let i = 0; i < 1000; i++) {
    const x = -rand();
    const rel = Math.abs(log1p(x) - Math.log1p(x)) / Math.abs(Math.log1p(x));
    assert.ok(rel <= 2.3e-16, `x = ${x}`);
  }
});

Deno.test("rng arithmetic: fma rounds once", () => {
  assert.equal(fma(0.1, 10, -1), 2 ** -54); // the double 0.1, times 10, minus 1 is exactly 2^-54
  assert.equal(0.1 * 10 - 1, 0); // what two roundings give
  assert.equal(fma(2 ** 600, 2 ** 600, -1), Infinity);
  assert.ok(Object.is(fma(2 ** -600, 2 ** -500, 0), 0)); // underflows to +0
  assert.ok(Object.is(fma(-(2 ** -600), 2 ** -500, 0), -0));
  assert.equal(fma(2 ** -537, 2 ** -537, 0), 2 ** -1074);
  assert.equal(fma(1 + 2 ** -52, 1 - 2 ** -52, -1), -(2 ** -104));
  assert.ok(Object.is(fma(1, 1, -1), 0));
  assert.equal(fma(3, 5, 7), 22);
  // Ties to even at the last bit: (1 + 2^-52)·(1 + 2^-52) = 1 + 2^-51 + 2^-104 → 1 + 2^-51.
  assert.equal(fma(1 + 2 ** -52, 1 + 2 ** -52, 0), 1 + 2 ** -51);
  assert.equal(fma(1 + 2 ** -52, 1 + 2 ** -52, -(2 ** -104)), 1 + 2 ** -51);
  assert.equal(fma(1 + 2 ** -52, 1 + 2 ** -52, 2 ** -60), 1 + 2 ** -51);
  assert.equal(fma(1, 1 + 2 ** -52, 2 ** -53), 1 + 2 * 2 ** -52); // tie, odd → up
  assert.equal(fma(1, 1, 2 ** -53), 1); // tie, even → down
});

// ---------------------------------------------------------------------------------------------
// Statistics (fixed domain ids, so these are deterministic; the bounds are what a correct
// generator passes with overwhelming probability)

Deno.test("rng statistics: mean of geometric variates within 5.7 sigma of 1/lambda", () => {
  // rand_geom is Geometric(λ) on {1, 2, …}: mean 1/λ, variance (1−λ)/λ². Over N draws the mean's
  // standard deviation is sqrt((1−λ)/(N λ²)); 5.7 sigma (OCaml's statmemprof bound) is a
  // two-sided probability of about 1.2e-8 for a correct generator.
  for (const [domain, lambda] of [[42, 0.01], [43, 1e-4], [44, 0.3]] as const) {
    const N = 200_000;
    const o = oneLog1mLambda(lambda);
    const r = new MemprofRng(domain, o);
    let sum = 0;
    for (let i = 0; i < N; i++) sum += r.geom(o);
    const mean = sum / N;
    const sigma = Math.sqrt((1 - lambda) / (N * lambda * lambda));
    assert.ok(Math.abs(mean - 1 / lambda) <= 5.7 * sigma, `λ=${lambda}: mean ${mean}`);
  }
});

Deno.test("rng statistics: chi-square of geometric frequencies at lambda 0.5", () => {
  // P(g = k) = 2^-k. Cells k = 1..12 and k ≥ 13 (expected ≥ 12 each with N = 100,000): the
  // statistic has 12 degrees of freedom; 50.8 is its 1 − 1e-6 quantile.
  const N = 100_000, o = oneLog1mLambda(0.5);
  const r = new MemprofRng(45, o);
  const counts = new Array(13).fill(0);
  for (let i = 0; i < N; i++) counts[Math.min(r.geom(o), 13) - 1]++;
  let chi2 = 0;
  for (let k = 1; k <= 13; k++) {
    const p = k < 13 ? 2 ** -k : 2 ** -12;
    chi2 += (counts[k - 1] - N * p) ** 2 / (N * p);
  }
  assert.ok(chi2 < 50.8, `chi2 = ${chi2}`);
});

Deno.test("rng statistics: binom totals within 5.7 sigma of the binomial mean", () => {
  // Each word is sampled with probability λ independently, so the total over W words is
  // Binomial(W, λ): mean Wλ, standard deviation sqrt(Wλ(1−λ)). Blocks of 1..300 words.
  for (const [domain, lambda] of [[46, 1e-3], [47, 0.05]] as const) {
    const o = oneLog1mLambda(lambda);
    const r = new MemprofRng(domain, o);
    let words = 0, samples = 0;
    for (let i = 0; i < 100_000; i++) {
      const len = 1 + ((i * 7919) % 300);
      words += len;
      samples += r.binom(len, o);
    }
    const sigma = Math.sqrt(words * lambda * (1 - lambda));
    assert.ok(Math.abs(samples - words * lambda) <= 5.7 * sigma, `λ=${lambda}: ${samples}`);
  }
});

// ---------------------------------------------------------------------------------------------
// The CLI

Deno.test("sampler CLI: --binom forms, defaults, --help and argument errors", () => {
  const ref = formatRngReference(3, 0.25, 5, [1, 2, 3, 10, 20]);
  for (
    const args of [
      [
        "--domain",
        "3",
        "--rate",
        "0.25",
        "--count",
        "5",
        "--binom",
        "1",
        "2",
        "3",
        "--binom",
        "10,20",
      ],
      ["--rate=0.25", "--domain=3", "--count=5", "--binom=1,2,3,10,20"],
      [
        "--binom",
        "1",
        "--binom",
        "2",
        "--binom",
        "3",
        "10",
        "20",
        "--rate",
        "2.5e-1",
        "--domain",
        "3",
        "--count",
        "5",
      ],
    ]
  ) {
    assert.deepEqual(capture(args), { code: 0, out: ref, err: "" }, args.join(" "));
  }
  // Defaults: domain 0, 200 values, the README's lengths.
  assert.equal(capture(["--rate", "0.01"]).out, fx1e2);
  const help = capture(["--help"]);
  assert.deepEqual(help, { code: 0, out: USAGE, err: "" });
  assert.equal(capture(["-h"]).out, USAGE);

  const bad: [string[], RegExp][] = [
    [[], /--rate is required/],
    [["--rate", "1.5"], /--rate must be within \[0, 1\]/],
    [["--rate", "-0.1"], /./],
    [["--rate", "abc"], /--rate must be a number/],
    [["--rate", "NaN"], /--rate must be a number/],
    [["--rate", "0.1", "--domain", "-3"], /./],
    [
      ["--rate", "0.1", "--domain", "18446744073709551616"],
      /--domain must be an integer from 0 to 18446744073709551615, got/,
    ],
    [["--rate", "0.1", "--count", "1.5"], /--count must be an integer from 0 to /],
    [
      ["--rate", "0.1", "--binom", "4611686018427387903"],
      /--binom length must be an integer from 0 to 4611686018427387902, got/,
    ],
    [["--rate", "0.1", "--binom", "1,,2"], /--binom length must be an integer from 0 to /],
    [["--rate", "0.1", "7"], /unexpected argument '7'/],
    [["--rate", "0.1", "--bogus"], /bogus/],
    [["--rate"], /--rate/],
  ];
  for (const [args, re] of bad) {
    const r = capture(args);
    assert.equal(r.code, 2, args.join(" "));
    assert.equal(r.out, "");
    assert.match(r.err, re);
    // One line, then the pointer to the help (the usage itself when no argument was given).
    assert.match(
      r.err,
      args.length === 0
        ? /^error: --rate is required\nUsage: memprof-lab sampler /
        : /^error: [^\n]*\nRun 'memprof-lab sampler --help' for usage\.\n$/,
    );
  }
});
