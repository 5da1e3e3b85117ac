/**
 * OCaml 5.3's generic hash, `Hashtbl.hash` (runtime/hash.c, `caml_hash` with count 10, limit 100,
 * seed 0): MurmurHash3's 32-bit mixing over the value's contents, visited breadth first. Only the
 * shapes memtrace's tools hash are modelled: immediate integers, strings (their UTF-8 bytes) and
 * tag-0 blocks (tuples and records) of those.
 * @module
 */

/** A value as `Hashtbl.hash` sees it: an `int`, a `string`, or a tuple (tag-0 block). */
export type OCamlValue = number | string | Uint8Array | readonly OCamlValue[];

const encoder = new TextEncoder();

function rotl32(x: number, n: number): number {
  return (x << n) | (x >>> (32 - n));
}

/** hash.c's `MIX(h, d)`. All values are uint32 carried in JS numbers. */
function mix(h: number, d: number): number {
  d = Math.imul(d, 0xcc9e2d51);
  d = rotl32(d, 15);
  d = Math.imul(d, 0x1b873593);
  h ^= d;
  h = rotl32(h, 13);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/** hash.c's `FINAL_MIX(h)`. */
function finalMix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h;
}

/** `caml_hash_mix_string`: 32-bit little-endian blocks, the 1–3 trailing bytes, the length. */
function mixString(h: number, s: Uint8Array): number {
  const len = s.length;
  let i = 0;
  for (; i + 4 <= len; i += 4) {
    h = mix(h, s[i] | (s[i + 1] << 8) | (s[i + 2] << 16) | (s[i + 3] << 24));
  }
  const rest = len & 3;
  if (rest > 0) {
    let w = 0;
    if (rest === 3) w = s[i + 2] << 16;
    if (rest >= 2) w |= s[i + 1] << 8;
    w |= s[i];
    h = mix(h, w);
  }
  return h ^ len;
}

/** `caml_hash_mix_intnat` on a 64-bit host, applied (as caml_hash does) to the tagged
 * representation 2n+1 of the integer n. */
function mixInt(h: number, n: number): number {
  if (Number.isSafeInteger(n) && n >= -(2 ** 30) && n < 2 ** 30) {
    return mix(h, (2 * n + 1) | 0); // the tagged value fits in 32 bits: n32 = (uint32) v
  }
  const v = BigInt.asIntN(64, 2n * BigInt(n) + 1n);
  const folded = (v >> 32n) ^ (v >> 63n) ^ v;
  return mix(h, Number(BigInt.asUintN(32, folded)) | 0);
}

/** OCaml's `Hashtbl.hash v` (`caml_hash 10 100 0 v`): a value in [0, 2^30). */
export function camlHash(v: OCamlValue): number {
  const queue: OCamlValue[] = [v];
  let rd = 0;
  let num = 10; // meaningful values still to mix
  const sz = 100; // at most this many values queued
  let h = 0; // the seed
  while (rd < queue.length && num > 0) {
    const x = queue[rd++];
    if (typeof x === "number") {
      h = mixInt(h, x);
      num--;
    } else if (typeof x === "string") {
      h = mixString(h, encoder.encode(x));
      num--;
    } else if (x instanceof Uint8Array) {
      h = mixString(h, x);
      num--;
    } else {
      // A tag-0 block: its header with the colour bits clear (wosize << 10 | tag), not counted.
      h = mix(h, (x.length * 1024) | 0);
      for (const field of x) {
        if (queue.length >= sz) break;
        queue.push(field);
      }
    }
  }
  return (finalMix(h) & 0x3fffffff) >>> 0;
}

/** `Hashtbl.hash` of a string given as its bytes (no queue: the common case, made cheap). */
export function camlHashBytes(s: Uint8Array): number {
  return (finalMix(mixString(0, s)) & 0x3fffffff) >>> 0;
}
