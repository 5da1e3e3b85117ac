/**
 * Releases due at given step numbers: a binary min-heap keyed by step, releasing in order of
 * (step, scheduling order) so that runs are deterministic. Pushing non-decreasing steps, the
 * common case, costs O(1).
 * @module
 */

/** A queue of actions to run when the step counter reaches their step. */
export class ReleaseQueue {
  #steps: number[] = [];
  #seqs: number[] = [];
  #fns: (() => void)[] = [];
  #seq = 0;

  /** Number of pending releases. */
  get size(): number {
    return this.#steps.length;
  }

  /** Step of the earliest pending release (Infinity when none). */
  get next(): number {
    return this.#steps.length === 0 ? Infinity : this.#steps[0];
  }

  /** Schedules `fn` for `step`. */
  push(step: number, fn: () => void): void {
    let i = this.#steps.length;
    const seq = this.#seq++;
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
    while (this.#steps.length > 0 && this.#steps[0] <= step) this.#pop()();
  }

  #pop(): () => void {
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

  /** Whether entry `k` is released before one for `step` scheduled `seq`-th. */
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

  #put(i: number, step: number, seq: number, fn: () => void): void {
    this.#steps[i] = step;
    this.#seqs[i] = seq;
    this.#fns[i] = fn;
  }
}
