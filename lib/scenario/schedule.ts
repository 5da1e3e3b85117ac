/**
 * Releases due at given step numbers, released in order of (step, scheduling order) so that runs
 * are deterministic. Releases pushed in non-decreasing order of step — the common case, every
 * block of a `keep.steps(n)` keeper — go to a first-in first-out ring at O(1); the others go to
 * a binary min-heap. Both hold their entries in (step, scheduling order), so taking the smaller
 * head of the two each time gives the same order as one heap would.
 * @module
 */

/** What a release does: a function to call, or an object to release (a runtime root). */
export type Release = (() => void) | { release(): void };

/** A queue of actions to run when the step counter reaches their step. */
export class ReleaseQueue {
  // The heap, in three parallel arrays.
  #steps: number[] = [];
  #seqs: number[] = [];
  #fns: Release[] = [];
  // The first-in first-out lane: a ring of `#laneLen` entries from `#head`, steps non-decreasing.
  #laneSteps = new Float64Array(16);
  #laneSeqs = new Float64Array(16);
  #laneFns: (Release | null)[] = new Array<Release | null>(16).fill(null);
  #mask = 15;
  #head = 0;
  #laneLen = 0;
  #seq = 0;
  #next = Infinity;

  /** Number of pending releases. */
  get size(): number {
    return this.#steps.length + this.#laneLen;
  }

  /** Step of the earliest pending release (Infinity when none). */
  get next(): number {
    return this.#next;
  }

  /** Schedules `fn` for `step`. */
  push(step: number, fn: Release): void {
    const seq = this.#seq++;
    if (step < this.#next) this.#next = step;
    const len = this.#laneLen;
    if (len === 0 || this.#laneSteps[(this.#head + len - 1) & this.#mask] <= step) {
      if (len > this.#mask) this.#growLane();
      const i = (this.#head + len) & this.#mask;
      this.#laneSteps[i] = step;
      this.#laneSeqs[i] = seq;
      this.#laneFns[i] = fn;
      this.#laneLen = len + 1;
      return;
    }
    let i = this.#steps.length;
    this.#steps.push(step);
    this.#seqs.push(seq);
    this.#fns.push(fn);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (this.#before(p, step, seq)) break;
      this.#move(i, p);
      i = p;
    }
    this.#put(i, step, seq, fn);
  }

  /** Runs, in order, every release scheduled at or before `step`. */
  runDue(step: number): void {
    for (;;) {
      let fn: Release;
      if (this.#laneLen > 0 && (this.#steps.length === 0 || this.#laneFirst())) {
        if (this.#laneSteps[this.#head] > step) break;
        fn = this.#shift();
      } else if (this.#steps.length > 0) {
        if (this.#steps[0] > step) break;
        fn = this.#pop();
      } else {
        break;
      }
      if (typeof fn === "function") fn();
      else fn.release();
    }
    const lane = this.#laneLen > 0 ? this.#laneSteps[this.#head] : Infinity;
    const heap = this.#steps.length > 0 ? this.#steps[0] : Infinity;
    this.#next = lane < heap ? lane : heap;
  }

  /** Removes the earliest pending releases for as long as `skip` says they need not run (it
   * sees each one's release): those then no longer count in {@linkcode next}. */
  dropWhile(skip: (fn: Release) => boolean): void {
    for (;;) {
      if (this.#laneLen > 0 && (this.#steps.length === 0 || this.#laneFirst())) {
        if (!skip(this.#laneFns[this.#head]!)) break;
        this.#shift();
      } else if (this.#steps.length > 0) {
        if (!skip(this.#fns[0])) break;
        this.#pop();
      } else {
        break;
      }
    }
    const lane = this.#laneLen > 0 ? this.#laneSteps[this.#head] : Infinity;
    const heap = this.#steps.length > 0 ? this.#steps[0] : Infinity;
    this.#next = lane < heap ? lane : heap;
  }

  /** Whether the lane's first entry goes before the heap's (both non-empty). */
  #laneFirst(): boolean {
    const h = this.#head;
    const s = this.#laneSteps[h], t = this.#steps[0];
    return s < t || (s === t && this.#laneSeqs[h] < this.#seqs[0]);
  }

  /** Takes the lane's first entry. */
  #shift(): Release {
    const h = this.#head;
    const fn = this.#laneFns[h]!;
    this.#laneFns[h] = null; // no reference kept to what was released
    this.#head = (h + 1) & this.#mask;
    this.#laneLen--;
    return fn;
  }

  #growLane(): void {
    const n = this.#mask + 1, len = this.#laneLen;
    const steps = new Float64Array(2 * n), seqs = new Float64Array(2 * n);
    const fns = new Array<Release | null>(2 * n).fill(null);
    for (let k = 0; k < len; k++) {
      const j = (this.#head + k) & this.#mask;
      steps[k] = this.#laneSteps[j];
      seqs[k] = this.#laneSeqs[j];
      fns[k] = this.#laneFns[j];
    }
    this.#laneSteps = steps;
    this.#laneSeqs = seqs;
    this.#laneFns = fns;
    this.#head = 0;
    this.#mask = 2 * n - 1;
  }

  #pop(): Release {
    const st = this.#steps, sq = this.#seqs, fs = this.#fns;
    const top = fs[0];
    const lastStep = st.pop()!, lastSeq = sq.pop()!, lastFn = fs.pop()!;
    const n = st.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && this.#before(r, st[l], sq[l]) ? r : l;
        if (!this.#before(c, lastStep, lastSeq)) break;
        this.#move(i, c);
        i = c;
      }
      this.#put(i, lastStep, lastSeq, lastFn);
    }
    return top;
  }

  /** Whether entry `k` of the heap is released before one for `step` scheduled `seq`-th. */
  #before(k: number, step: number, seq: number): boolean {
    const s = this.#steps[k];
    return s < step || (s === step && this.#seqs[k] < seq);
  }

  /** Entry `from` moves to `to`. */
  #move(to: number, from: number): void {
    this.#steps[to] = this.#steps[from];
    this.#seqs[to] = this.#seqs[from];
    this.#fns[to] = this.#fns[from];
  }

  #put(i: number, step: number, seq: number, fn: Release): void {
    this.#steps[i] = step;
    this.#seqs[i] = seq;
    this.#fns[i] = fn;
  }
}
