/**
 * Whether ocamlopt 5.3 compiles a `match` on integer constants to a jump table (an `Iswitch` in
 * Mach), which OCaml 5.3's polling analysis never counts as allocating (see polling.ts). A port of
 * the decision part of lambda/switch.ml (`Switch.Make`: `opt_count`, `dense`, `comp_clusters`),
 * run as ocamlopt runs it twice: once by the pattern-matching compiler on the match's intervals
 * (lambda/matching.ml, `call_switcher` with `as_interval_canfail`), which turns each dense
 * cluster of cases into an `Lswitch`, then by cmmgen on that switch's table
 * (asmcomp/cmm_helpers.ml, `transl_switch_clambda`), which makes it a `Cswitch` only if its
 * table is dense again.
 * @module
 */

/** A case: the integers `lo`–`hi` (±Infinity for min_int/max_int) go to action `act`. */
type Case = readonly [lo: number, hi: number, act: number];

/** Tests of a test sequence: `n` in all, `ni` of them interval tests. */
interface Cost {
  n: number;
  ni: number;
}

type Ret =
  | { readonly kind: "inter"; readonly i: number; readonly j: number }
  | { readonly kind: "sep"; readonly i: number }
  | { readonly kind: "no" };

const TOO_MUCH: Cost = { n: Number.MAX_SAFE_INTEGER, ni: Number.MAX_SAFE_INTEGER };
const SMALL_SIZE_LIMIT = 8;
const MEDIUM_SIZE_LIMIT = 16;
const INTER_LIMIT = 1 << 16;
const THETA = 0.33333;
const SWITCH_MIN = 3;

function lessTests(c1: Cost, c2: Cost): boolean {
  return c1.n < c2.n || (c1.n === c2.n && c1.ni < c2.ni);
}

function less2Tests(a: readonly [Cost, Cost], b: readonly [Cost, Cost]): boolean {
  const eq = a[0].n === b[0].n && a[0].ni === b[0].ni;
  return eq ? lessTests(a[1], b[1]) : lessTests(a[0], b[0]);
}

function addTest(t1: Cost, t2: Cost): void {
  t1.n += t2.n;
  t1.ni += t2.ni;
}

function caseAppend(c1: readonly Case[], c2: readonly Case[]): Case[] {
  if (c1.length === 0) return [...c2];
  if (c2.length === 0) return [...c1];
  const [l1, h1, act1] = c1[c1.length - 1];
  const [l2, h2, act2] = c2[0];
  if (act1 === act2) {
    const l = c1.length < 2 ? l1 : Math.min(c1[c1.length - 2][1] + 1, l1);
    const h = c2.length < 2 ? h2 : Math.max(h2, c2[1][0] - 1);
    return [...c1.slice(0, -1), [l, h, act1], ...c2.slice(1)];
  }
  if (h1 > l1) return [...c1.slice(0, -1), [l1, l2 - 1, act1], ...c2];
  if (h2 > l2) return [...c1, [h1 + 1, h2, act2], ...c2.slice(1)];
  return [...c1, ...c2];
}

function coupeInter(i: number, j: number, cases: readonly Case[]) {
  return {
    low: cases[i][0],
    high: cases[j][1],
    inside: cases.slice(i, j + 1),
    outside: caseAppend(cases.slice(0, i), cases.slice(j + 1)),
  };
}

/** The memo key of `cases`: their shape (singletons, intervals, gaps) and which share actions. */
function makeKey(cases: readonly Case[]): string {
  const seen: number[] = [];
  const gotIt = (act: number) => {
    const k = seen.indexOf(act);
    if (k >= 0) return k;
    seen.push(act);
    return seen.length - 1;
  };
  const one = ([l, h, act]: Case) => (l === h ? "V" : "I") + gotIt(act);
  const out = [one(cases[cases.length - 1])];
  let pl = cases[cases.length - 1][0];
  for (let i = cases.length - 2; i >= 0; i--) {
    const [l, h] = cases[i];
    if (pl !== h + 1) out.push("E");
    out.push(one(cases[i]));
    pl = l;
  }
  return out.join(" ");
}

/** One instance of `Switch.Make`'s decision procedures, with interval tests allowed or not. */
class Switcher {
  readonly #okInter: boolean;
  readonly #memo = new Map<string, readonly [Ret, readonly [Cost, Cost]]>();

  constructor(okInter: boolean) {
    this.#okInter = okInter;
  }

  optCount(cases: readonly Case[]): readonly [Ret, readonly [Cost, Cost]] {
    const key = makeKey(cases);
    const known = this.#memo.get(key);
    if (known !== undefined) return known;
    let r: readonly [Ret, readonly [Cost, Cost]];
    if (cases.every(([, , a]) => a === cases[cases.length - 1][2])) {
      r = [{ kind: "no" }, [{ n: 0, ni: 0 }, { n: 0, ni: 0 }]];
    } else if (cases.length < SMALL_SIZE_LIMIT) r = this.#enum(cases);
    else if (cases.length < MEDIUM_SIZE_LIMIT) r = this.#heuristic(cases);
    else r = this.#divide(cases);
    this.#memo.set(key, r);
    return r;
  }

  /** Tests around `left` and `right`: one test, then the costlier side (worst case). */
  #split(left: readonly Case[], right: readonly Case[]): [Cost, Cost] {
    const ci = { n: 1, ni: 0 };
    const cm = { n: 1, ni: 0 };
    const [cml, cleft] = this.optCount(left)[1];
    const [cmr, cright] = this.optCount(right)[1];
    addTest(ci, cleft);
    addTest(ci, cright);
    addTest(cm, lessTests(cml, cmr) ? cmr : cml);
    return [cm, ci];
  }

  #inter(
    i: number,
    j: number,
    cases: readonly Case[],
  ): { low: number; high: number; cost: [Cost, Cost] } {
    const { low, high, inside, outside } = coupeInter(i, j, cases);
    const ni = low === high ? 0 : 1;
    const cmij = { n: 1, ni };
    const cij = { n: 1, ni };
    const [cmi, cinside] = this.optCount(inside)[1];
    const [cmo, coutside] = this.optCount(outside)[1];
    addTest(cij, cinside);
    addTest(cij, coutside);
    addTest(cmij, lessTests(cmi, cmo) ? cmo : cmi);
    return { low, high, cost: [cmij, cij] };
  }

  #divide(cases: readonly Case[]): readonly [Ret, readonly [Cost, Cost]] {
    const m = Math.floor(cases.length / 2);
    return [{ kind: "sep", i: m }, this.#split(cases.slice(0, m), cases.slice(m))];
  }

  #heuristic(cases: readonly Case[]): readonly [Ret, readonly [Cost, Cost]] {
    const [sep, csep] = this.#divide(cases);
    let inter: Ret = { kind: "inter", i: -1, j: -1 };
    let cinter: readonly [Cost, Cost] = [TOO_MUCH, TOO_MUCH];
    if (this.#okInter && cases[0][2] === cases[cases.length - 1][2]) {
      inter = { kind: "inter", i: 1, j: cases.length - 2 };
      cinter = this.#inter(1, cases.length - 2, cases).cost;
    }
    return less2Tests(csep, cinter) ? [sep, csep] : [inter, cinter];
  }

  #enum(cases: readonly Case[]): readonly [Ret, readonly [Cost, Cost]] {
    const len = cases.length;
    let lim = -1;
    let withSep: readonly [Cost, Cost] = [TOO_MUCH, TOO_MUCH];
    for (let i = 1; i <= len - 1; i++) {
      const c = this.#split(cases.slice(0, i), cases.slice(i));
      if (less2Tests(c, withSep)) {
        lim = i;
        withSep = c;
      }
    }
    let ilow = -1, ihigh = -1;
    let withInter: readonly [Cost, Cost] = [TOO_MUCH, TOO_MUCH];
    for (let i = 1; i <= len - 2; i++) {
      for (let j = i; j <= (this.#okInter ? len - 2 : i); j++) {
        const { low, high, cost } = this.#inter(i, j, cases);
        if (!this.#okInter && low !== high) continue;
        if (less2Tests(cost, withInter)) {
          ilow = i;
          ihigh = j;
          withInter = cost;
        }
      }
    }
    if (less2Tests(withSep, withInter)) return [{ kind: "sep", i: lim }, withSep];
    return [{ kind: "inter", i: ilow, j: ihigh }, withInter];
  }

  #dense(cases: readonly Case[], i: number, j: number): boolean {
    if (i === j) return true;
    const l = cases[i][0];
    const h = cases[j][1];
    const n = j - i + 1;
    const ntests = n < SMALL_SIZE_LIMIT ? this.optCount(cases.slice(i, j + 1))[1][1].n : n - 1;
    return particularCase(cases, i, j) ||
      (ntests >= SWITCH_MIN && ntests + 1 >= THETA * (h - l + 1));
  }

  /** The clusters `zyva` makes of `cases` (`comp_clusters`, then `make_clusters`' walk):
   * `[first, last]` case index of each, last cluster first. */
  clusters(cases: readonly Case[]): [number, number][] {
    const len = cases.length;
    const minClusters = new Array<number>(len).fill(Infinity);
    const k = new Array<number>(len).fill(0);
    const getMin = (i: number) => i < 0 ? 0 : minClusters[i];
    for (let i = 0; i < len; i++) {
      for (let j = 0; j <= i; j++) {
        if (this.#dense(cases, j, i) && getMin(j - 1) + 1 < minClusters[i]) {
          k[i] = j;
          minClusters[i] = getMin(j - 1) + 1;
        }
      }
    }
    const out: [number, number][] = [];
    for (let j = len - 1; j >= 0;) {
      out.push([k[j], j]);
      j = k[j] - 1;
    }
    return out;
  }
}

/** matching.ml's `as_interval_canfail`: the cases of `arms` (sorted) from `low` to `high`,
 * the integers no arm names going to the default, action 0. */
function asIntervalCanfail(
  arms: readonly (readonly [number, number])[],
  low: number,
  high: number,
): Case[] {
  const nofail = (curLow: number, curHigh: number, curAct: number, k: number): Case[] => {
    if (k === arms.length) {
      return curHigh === high
        ? [[curLow, curHigh, curAct]]
        : [[curLow, curHigh, curAct], [curHigh + 1, high, 0]];
    }
    const [i, act] = arms[k];
    if (curHigh + 1 === i) {
      if (act === curAct) return nofail(curLow, i, curAct, k + 1);
      if (act === 0) return [[curLow, i - 1, curAct], ...fail(i, i, k + 1)];
      return [[curLow, i - 1, curAct], ...nofail(i, i, act, k + 1)];
    }
    if (act === 0) return [[curLow, curHigh, curAct], ...fail(curHigh + 1, curHigh + 1, k)];
    return [[curLow, curHigh, curAct], [curHigh + 1, i - 1, 0], ...nofail(i, i, act, k + 1)];
  };
  const fail = (curLow: number, curHigh: number, k: number): Case[] => {
    if (k === arms.length) return [[curLow, curHigh, 0]];
    const [i, act] = arms[k];
    if (act === 0) return fail(curLow, i, k + 1);
    return [[curLow, i - 1, 0], ...nofail(i, i, act, k + 1)];
  };
  if (arms.length === 0) return [[low, high, 0]];
  const [i, act] = arms[0];
  if (act === 0) return fail(low, i, 1);
  if (low < i) return [[low, i - 1, 0], ...nofail(i, i, act, 1)];
  return nofail(i, i, act, 1);
}

function particularCase(cases: readonly Case[], i: number, j: number): boolean {
  if (j - i !== 2) return false;
  const [l1, , act1] = cases[i];
  const [l2] = cases[i + 1];
  const [l3, h3, act3] = cases[i + 2];
  return l1 + 1 === l2 && l2 + 1 === l3 && l3 === h3 && act1 !== act3;
}

/**
 * Whether `match v with c1 -> a1 | … | ck -> ak | _ -> default` compiles to a jump table:
 * `arms` are the constants with their actions (equal numbers: the same action, shared; 0 is
 * the default's).
 */
export function matchHasJumpTable(
  arms: readonly (readonly [value: number, act: number])[],
): boolean {
  if (arms.length === 0) return false;
  const sorted = [...arms].sort((a, b) => a[0] - b[0]);
  const cases = asIntervalCanfail(sorted, -Infinity, Infinity);
  const low = sorted[0][0], high = sorted[sorted.length - 1][0];
  const first = new Switcher(Math.abs(low) <= INTER_LIMIT && Math.abs(high) <= INTER_LIMIT);
  for (const [i, j] of first.clusters(cases)) {
    if (i === j || !Number.isFinite(cases[i][0]) || !Number.isFinite(cases[j][1])) continue;
    // matching.ml's make_switch: a table of the cluster's values; cmmgen groups equal
    // neighbours into intervals and runs the same procedure on them, from 0 to n - 1.
    const table: number[] = [];
    for (let c = i; c <= j; c++) {
      for (let v = cases[c][0]; v <= cases[c][1]; v++) table.push(cases[c][2]);
    }
    const inters: Case[] = [];
    table.forEach((act, p) => {
      const last = inters[inters.length - 1];
      if (last !== undefined && last[2] === act) inters[inters.length - 1] = [last[0], p, act];
      else inters.push([p, p, act]);
    });
    if (inters.length === 1) continue;
    const second = new Switcher(true);
    if (second.clusters(inters).some(([a, b]) => a !== b)) return true;
  }
  return false;
}
