/**
 * Releases due at given step numbers: a binary min-heap keyed by step, releasing in order of
 * (step, scheduling order) so that runs are deterministic. Pushing non-decreasing steps, the
 * common case, costs O(1).
 * @module
 */

/** A queue of actions to run when the step counter reaches their step. */
export class ReleaseQueue {
  private steps: number[] = [];
  private seqs: number[] = [];
  private fns: (() => void)[] = [];
  private seq = 0;

  /** Number of pending releases. */
  get size(): number {
    return this.steps.length;
  }

  /** Step of the earliest pending release (Infinity when none). */
  get next(): number {
    return this.steps.length === 0 ? Infinity : this.steps[0];
  }

  /** Schedules `fn` for `step`. */
  push(step: number, fn: () => void): void {
    const st = this.steps, sq = this.seqs, fs = this.fns;
    let i = st.length;
    const seq = this.seq++;
    st.push(step);
    sq.push(seq);
    fs.push(fn);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (st[p] < step || (st[p] === step && sq[p] < seq)) break;
      st[i] = st[p];
      sq[i] = sq[p];
      fs[i] = fs[p];
      i = p;
    }
    st[i] = step;
    sq[i] = seq;
    fs[i] = fn;
  }

  /** Runs, in order, every release scheduled at or before `step`. */
  runDue(step: number): void {
    while (this.steps.length > 0 && this.steps[0] <= step) this.pop()();
  }

  private pop(): () => void {
    const st = this.steps, sq = this.seqs, fs = this.fns;
    const top = fs[0];
    const lastStep = st.pop()!, lastSeq = sq.pop()!, lastFn = fs.pop()!;
    const n = st.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && (st[r] < st[l] || (st[r] === st[l] && sq[r] < sq[l])) ? r : l;
        if (st[c] > lastStep || (st[c] === lastStep && sq[c] > lastSeq)) break;
        st[i] = st[c];
        sq[i] = sq[c];
        fs[i] = fs[c];
        i = c;
      }
      st[i] = lastStep;
      sq[i] = lastSeq;
      fs[i] = lastFn;
    }
    return top;
  }
}
