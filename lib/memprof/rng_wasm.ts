/**
 * A WebAssembly SIMD version of memprof.c's `rand_batch`, assembled here from opcodes (no
 * toolchain at build or run time). It computes the same float32 operations as the C in the same
 * order, four lanes at a time: wasm's f32x4 arithmetic rounds each operation to float32 (IEEE
 * round-to-nearest-even, no fused multiply-add), `f32x4.convert_i32x4_u` is a correctly rounded
 * uint32 → float conversion like the C's, and the type pun of `log_approx` is free on v128.
 *
 * Memory layout of each instance (one 64 KiB page, exported as "memory"):
 * - bytes 0..1023: the lanes, word k of lane i at byte 4·(64k + i) (the C's xoshiro_state[k][i]);
 * - bytes 1024..1279: the 64 output variates as float32 (floored, capped at 2^62 for Max_long).
 *
 * Export "refill"(o: f32): one batch. The JS caller passes a double; the wasm f32 parameter
 * conversion rounds it to nearest, exactly like the C's `float one_log1m_lambda = <double>`.
 *
 * @module
 */

import type { BatchKernel } from "./rng.ts";

const LANES_BYTES = 1024;

// --- a tiny assembler -------------------------------------------------------------------------

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

function section(id: number, body: number[]): number[] {
  return [id, ...uleb(body.length), ...body];
}

function name(s: string): number[] {
  const bytes = [...new TextEncoder().encode(s)];
  return [...uleb(bytes.length), ...bytes];
}

// Opcodes used (core and 0xFD-prefixed SIMD).
const LOCAL_GET = 0x20, LOCAL_SET = 0x21, LOCAL_TEE = 0x22;
const I32_CONST = 0x41, I32_ADD = 0x6a, I32_LT_U = 0x49;
const LOOP = 0x03, BR_IF = 0x0d, END = 0x0b, VOID = 0x40;
const I32 = 0x7f, F32 = 0x7d, V128 = 0x7b;

const simd = (op: number): number[] => [0xfd, ...uleb(op)];
const V128_LOAD = 0x00, V128_STORE = 0x0b, V128_CONST = 0x0c;
const F32X4_SPLAT = 0x13;
const V128_AND = 0x4e, V128_OR = 0x50, V128_XOR = 0x51;
const F32X4_FLOOR = 0x68;
const I32X4_SHL = 0xab, I32X4_SHR_S = 0xac, I32X4_SHR_U = 0xad, I32X4_ADD = 0xae;
const F32X4_ADD = 0xe4, F32X4_MUL = 0xe6, F32X4_PMIN = 0xea;
const F32X4_CONVERT_I32X4_S = 0xfa, F32X4_CONVERT_I32X4_U = 0xfb;

const get = (l: number) => [LOCAL_GET, ...uleb(l)];
const set = (l: number) => [LOCAL_SET, ...uleb(l)];
const i32c = (n: number) => [I32_CONST, ...sleb(n)];
const op = simd;
/** v128.load / v128.store with 16-byte alignment and a constant offset. */
const load = (offset: number) => [...simd(V128_LOAD), 4, ...uleb(offset)];
const store = (offset: number) => [...simd(V128_STORE), 4, ...uleb(offset)];

function constF32x4(f: number): number[] {
  const b = new Uint8Array(new Float32Array([f, f, f, f]).buffer);
  return [...simd(V128_CONST), ...b];
}

function constI32x4(n: number): number[] {
  const b = new Uint8Array(new Int32Array([n, n, n, n]).buffer);
  return [...simd(V128_CONST), ...b];
}

/** log_approx's float32 coefficients, as passed to {@link assembleBatchModule}. */
export interface LogApproxConstants {
  /** -111.70172433407f */
  c0: number;
  /** 2.104659476859f */
  c1: number;
  /** -0.720478916626f */
  c2: number;
  /** 0.107132064797f */
  c3: number;
  /** 0.6931471805f */
  ln2: number;
}

/** The v128 constants the kernel uses, each held in a local. */
type ConstName =
  | "half"
  | "mantMask"
  | "one1"
  | "c0"
  | "c1"
  | "c2"
  | "c3"
  | "ln2"
  | "one"
  | "cap";

function constBytes(name: ConstName, c: LogApproxConstants): number[] {
  switch (name) {
    case "half":
      return constF32x4(0.5);
    case "mantMask":
      return constI32x4(0x7fffff);
    case "one1":
      return constI32x4(0x3f800000); // the bits of 1.0f
    case "one":
      return constF32x4(1);
    case "cap":
      return constF32x4(2 ** 62);
    default:
      return constF32x4(c[name]);
  }
}

const CONST_NAMES: ConstName[] = [
  "half",
  "mantMask",
  "one1",
  "c0",
  "c1",
  "c2",
  "c3",
  "ln2",
  "one",
  "cap",
];

/**
 * Code for one group of four lanes at byte offset `off` from local `i`: advance the lanes, write
 * their variates. `l` holds the indices of this group's seven v128 scratch locals.
 */
function groupCode(
  off: number,
  l: { a0: number; a1: number; a2: number; a3: number; y: number; v: number; x: number },
  I: number,
  O: number,
  K: (name: ConstName) => number[],
): number[] {
  return [
    // Load the four state words of the lanes.
    ...get(I),
    ...load(off),
    ...set(l.a0),
    ...get(I),
    ...load(off + 256),
    ...set(l.a1),
    ...get(I),
    ...load(off + 512),
    ...set(l.a2),
    ...get(I),
    ...load(off + 768),
    ...set(l.a3),
    // xoshiro128+: y = s0 + s3; s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= s1 << 9;
    // s3 = rotl(s3, 11).
    ...get(l.a0),
    ...get(l.a3),
    ...op(I32X4_ADD),
    ...set(l.y),
    ...get(l.a2),
    ...get(l.a0),
    ...op(V128_XOR),
    ...set(l.a2), // a2 = s2 ^ s0
    ...get(l.a3),
    ...get(l.a1),
    ...op(V128_XOR),
    ...set(l.a3), // a3 = s3 ^ s1
    ...get(I),
    ...get(l.a0),
    ...get(l.a3),
    ...op(V128_XOR),
    ...store(off),
    ...get(I),
    ...get(l.a1),
    ...get(l.a2),
    ...op(V128_XOR),
    ...store(off + 256),
    ...get(I),
    ...get(l.a2),
    ...get(l.a1),
    ...i32c(9),
    ...op(I32X4_SHL),
    ...op(V128_XOR),
    ...store(off + 512),
    ...get(I),
    ...get(l.a3),
    ...i32c(11),
    ...op(I32X4_SHL),
    ...get(l.a3),
    ...i32c(21),
    ...op(I32X4_SHR_U),
    ...op(V128_OR),
    ...store(off + 768),
    // log_approx: v = (float)y + 0.5f; x = mantissa of v in [1, 2); exp = (float)(bits >> 23).
    ...get(l.y),
    ...op(F32X4_CONVERT_I32X4_U),
    ...K("half"),
    ...op(F32X4_ADD),
    ...set(l.v),
    ...get(l.v),
    ...K("mantMask"),
    ...op(V128_AND),
    ...K("one1"),
    ...op(V128_OR),
    ...set(l.x),
    // Address for the final store, pushed before the value.
    ...get(I),
    // c0 + x * (c1 + x * (c2 + x * c3)), one rounding per operation as in the C.
    ...get(l.x),
    ...K("c3"),
    ...op(F32X4_MUL),
    ...K("c2"),
    ...op(F32X4_ADD),
    ...get(l.x),
    ...op(F32X4_MUL),
    ...K("c1"),
    ...op(F32X4_ADD),
    ...get(l.x),
    ...op(F32X4_MUL),
    ...K("c0"),
    ...op(F32X4_ADD),
    // + ln2 * exp
    ...get(l.v),
    ...i32c(23),
    ...op(I32X4_SHR_S),
    ...op(F32X4_CONVERT_I32X4_S),
    ...K("ln2"),
    ...op(F32X4_MUL),
    ...op(F32X4_ADD),
    // B = 1 + l * o; then floor, and cap at 2^62 (stands for Max_long; +inf is capped too).
    ...get(O),
    ...op(F32X4_MUL),
    ...K("one"),
    ...op(F32X4_ADD),
    ...op(F32X4_FLOOR),
    ...K("cap"),
    // pmin(a, b) = b < a ? b : a: a single minps (min's NaN rules cost more; no NaN here).
    ...op(F32X4_PMIN),
    ...store(LANES_BYTES + off),
  ];
}

/**
 * The module's bytes. The float constants are passed in by the caller (rng.ts's float32 values of
 * log_approx's literals), so both kernels share one definition of them. `unroll` groups of four
 * lanes are processed per loop iteration (a divisor of 16; 16 = no loop at all).
 */
export function assembleBatchModule(
  c: LogApproxConstants,
  unroll = 1,
): Uint8Array<ArrayBuffer> {
  if (![1, 2, 4, 8, 16].includes(unroll)) throw new RangeError(`bad unroll factor ${unroll}`);
  // Locals: 0 = o (param f32), 1 = i (byte offset of the first group), 2 = splat(o), then seven
  // v128 scratch locals per unrolled group.
  const I = 1, O = 2;
  const firstConst = 3 + 7 * unroll;
  // The constants live in locals set once before the loop: V8 would otherwise rematerialise each
  // v128.const inside the loop (measured: 1.45 → 1.08 ns per variate).
  const K = (name: ConstName) => get(firstConst + CONST_NAMES.indexOf(name));
  const init: number[] = [];
  CONST_NAMES.forEach((n, j) => init.push(...constBytes(n, c), ...set(firstConst + j)));
  const groups: number[] = [];
  for (let g = 0; g < unroll; g++) {
    const b = 3 + 7 * g;
    groups.push(...groupCode(
      16 * g,
      {
        a0: b,
        a1: b + 1,
        a2: b + 2,
        a3: b + 3,
        y: b + 4,
        v: b + 5,
        x: b + 6,
      },
      I,
      O,
      K,
    ));
  }
  const step = 16 * unroll;
  const body: number[] = [
    ...init,
    ...get(0),
    ...op(F32X4_SPLAT),
    ...set(O),
    LOOP,
    VOID,
    ...groups,
    // i += step; loop while i < 256 (the 64 lanes are 256 bytes per state word).
    ...get(I),
    ...i32c(step),
    I32_ADD,
    LOCAL_TEE,
    ...uleb(I),
    ...i32c(256),
    I32_LT_U,
    BR_IF,
    0,
    END,
    END,
  ];
  const nV128 = 1 + 7 * unroll + CONST_NAMES.length;
  const locals = [2, 1, I32, ...uleb(nV128), V128]; // 1 × i32, then the v128s
  const func = [...locals, ...body];
  const bytes = [
    0x00,
    0x61,
    0x73,
    0x6d, // "\0asm"
    0x01,
    0x00,
    0x00,
    0x00, // version 1
    ...section(1, [1, 0x60, 1, F32, 0]), // type 0: (f32) -> ()
    ...section(3, [1, 0]), // func 0 has type 0
    ...section(5, [1, 0x00, 1]), // memory 0: min 1 page, no max
    ...section(7, [2, ...name("refill"), 0x00, 0, ...name("memory"), 0x02, 0]),
    ...section(10, [1, ...uleb(func.length), ...func]),
  ];
  return new Uint8Array(bytes);
}

/** The unroll factor used by default (1, 2, 4 and 16 measured the same here). */
export const DEFAULT_UNROLL = 1;

const compiled = new Map<string, WebAssembly.Module | null>();

/** Compiles each distinct module once; null if this engine lacks WebAssembly SIMD. */
function batchModule(constants: LogApproxConstants, unroll: number): WebAssembly.Module | null {
  const key = JSON.stringify([
    constants.c0,
    constants.c1,
    constants.c2,
    constants.c3,
    constants.ln2,
    unroll,
  ]);
  let m = compiled.get(key);
  if (m === undefined) {
    m = null;
    try {
      const bytes = assembleBatchModule(constants, unroll);
      if (typeof WebAssembly === "object" && WebAssembly.validate(bytes)) {
        m = new WebAssembly.Module(bytes);
      }
    } catch {
      m = null;
    }
    compiled.set(key, m);
  }
  return m;
}

/** One kernel = one instance with its own memory (one domain's lanes and buffer). */
class WasmBatchKernel implements BatchKernel {
  readonly name = "wasm-simd" as const;
  readonly lanes: Int32Array;
  readonly out: Float32Array;
  readonly refill: (oneLog1mLambda: number) => void;

  constructor(module: WebAssembly.Module) {
    const inst = new WebAssembly.Instance(module, {});
    const mem = inst.exports.memory as WebAssembly.Memory;
    this.lanes = new Int32Array(mem.buffer, 0, 256);
    this.out = new Float32Array(mem.buffer, LANES_BYTES, 64);
    this.refill = inst.exports.refill as (o: number) => void;
  }
}

/**
 * A fresh WebAssembly SIMD batch kernel (lanes zeroed), or null when WebAssembly SIMD is not
 * available. `constants` are log_approx's float32 coefficients.
 * @internal
 */
export function createWasmBatchKernelWith(
  constants: LogApproxConstants,
  unroll: number = DEFAULT_UNROLL,
): BatchKernel | null {
  const m = batchModule(constants, unroll);
  return m === null ? null : new WasmBatchKernel(m);
}
