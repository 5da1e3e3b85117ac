/* Anchor for bench/sampler_bench.ts: memprof's geometric draw as OCaml 5.3's runtime/memprof.c
 * computes it (64 xoshiro128+ lanes seeded by splitmix64 from the domain id, a degree-3
 * logarithm approximation in float, batches of 64), written for this project from the
 * algorithm's description, compiled with gcc -O2 like the runtime.
 *
 * Usage: geom LAMBDA DRAWS SEED -> prints "ns_per_draw checksum", the checksum being the sum of
 * the draws (mod 2^64), which the TypeScript generator must reproduce.
 *        geom LAMBDA BLOCKS SEED binom -> memprof.c's rand_binom for BLOCKS blocks of 1 to 16
 * words (block i has (i mod 16) + 1), next_rand_geom starting at 0: prints "ns_per_block
 * checksum", the checksum being the total number of samples. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LANES 64

static uint32_t st[4][LANES];
static uint64_t buf[LANES];
static int pos = LANES;

static uint64_t splitmix(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static void seed_lanes(uint64_t seed) {
  for (int i = 0; i < LANES; i++) {
    uint64_t t = splitmix(&seed);
    st[0][i] = (uint32_t)t;
    st[1][i] = (uint32_t)(t >> 32);
    t = splitmix(&seed);
    st[2][i] = (uint32_t)t;
    st[3][i] = (uint32_t)(t >> 32);
  }
}

static inline float approx_log(uint32_t y) {
  union { float f; int32_t i; } u;
  u.f = y + 0.5f;
  float e = (float)(u.i >> 23);
  u.i = (u.i & 0x7FFFFF) | 0x3F800000;
  float x = u.f;
  return -111.70172433407f + x * (2.104659476859f + x * (-0.720478916626f + x * 0.107132064797f)) +
         0.6931471805f * e;
}

__attribute__((optimize("tree-vectorize"))) static void refill(float o) {
  uint32_t a[LANES];
  float b[LANES];
  for (int i = 0; i < LANES; i++) {
    uint32_t r = st[0][i] + st[3][i];
    uint32_t t = st[1][i] << 9;
    st[2][i] ^= st[0][i];
    st[3][i] ^= st[1][i];
    st[1][i] ^= st[2][i];
    st[0][i] ^= st[3][i];
    st[2][i] ^= t;
    t = st[3][i];
    st[3][i] = (t << 11) | (t >> 21);
    a[i] = r;
  }
  for (int i = 0; i < LANES; i++) b[i] = 1 + approx_log(a[i]) * o;
  for (int i = 0; i < LANES; i++) {
    double f = b[i];
    buf[i] = f >= 4611686018427387904.0 ? 4611686018427387903ull : (uint64_t)f;
  }
  pos = 0;
}

static inline uint64_t geom(float o) {
  if (pos == LANES) refill(o);
  return buf[pos++];
}

/* memprof.c's next_rand_geom and rand_binom: gaps are drawn while the block reaches past the
 * next sample. */
static uint64_t next_rand_geom = 0;

static inline uint64_t binom(uint64_t len, float o) {
  uint64_t res;
  for (res = 0; next_rand_geom < len; res++) next_rand_geom += geom(o);
  next_rand_geom -= len;
  return res;
}

int main(int argc, char **argv) {
  int by_block = argc == 5 && argv[4][0] == 'b';
  if (argc != 4 && !by_block) {
    fprintf(stderr, "usage: geom LAMBDA DRAWS SEED [binom]\n");
    return 2;
  }
  double lambda = strtod(argv[1], NULL);
  long draws = strtol(argv[2], NULL, 10);
  seed_lanes((uint64_t)strtoull(argv[3], NULL, 10));
  float o = (float)(1.0 / log1p(-lambda));
  struct timespec t0, t1;
  uint64_t sum = 0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (by_block)
    for (long i = 0; i < draws; i++) sum += binom((uint64_t)(i & 15) + 1, o);
  else
    for (long i = 0; i < draws; i++) sum += geom(o);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
  printf("%.3f %llu\n", ns / draws, (unsigned long long)sum);
  return 0;
}
