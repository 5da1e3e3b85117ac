/**
 * "Did you mean …?": the one helper that suggests the known name closest to a mistyped one, for
 * the keys of a scenario's options objects (lib/scenario/_options.ts) and the options of every
 * command (cli/_args.ts).
 * @module
 */

/** Edit distance of two keys: insertions, deletions, substitutions and swaps of two adjacent
 * characters each cost 1 (the optimal string alignment distance). */
export function editDistance(a: string, b: string): number {
  const m = a.length, n = b.length;
  // Three rows suffice: the swap looks two rows back.
  let prev2 = new Array<number>(n + 1).fill(0);
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  let cur = new Array<number>(n + 1).fill(0);
  for (let i = 1; i <= m; i++) {
    cur[0] = i;
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, prev2[j - 2] + 1);
      }
      cur[j] = d;
    }
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return prev[n];
}

/** The known key closest to `key`, when it is close enough to be what was meant: the same
 * letters in another case, or at most 2 edits away (1 for keys of up to 3 characters). */
export function suggest(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  const sameCase = known.find((k) => k.toLowerCase() === lower);
  if (sameCase !== undefined) return sameCase;
  let best: string | undefined, bestD = Infinity;
  for (const k of known) {
    const d = editDistance(lower, k.toLowerCase());
    if (d < bestD) {
      best = k;
      bestD = d;
    }
  }
  const limit = key.length <= 3 ? 1 : 2;
  return bestD <= limit ? best : undefined;
}
