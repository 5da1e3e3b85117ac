/**
 * Growable typed arrays for the aggregation's tables: one allocation per doubling, none per
 * event.
 * @module
 */

/** An append-only list of 32-bit integers. */
export class GrowI32 {
  /** The storage; entries past {@linkcode GrowI32.length} are meaningless. */
  data: Int32Array;
  /** Number of entries. */
  length = 0;
  constructor(capacity = 256) {
    this.data = new Int32Array(capacity);
  }
  /** Appends `v`; returns its index. */
  push(v: number): number {
    if (this.length === this.data.length) {
      const next = new Int32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length] = v;
    return this.length++;
  }
  /** The entries as a plain array. */
  toArray(): number[] {
    return Array.from(this.data.subarray(0, this.length));
  }
}

/** An append-only list of doubles. */
export class GrowF64 {
  /** The storage; entries past {@linkcode GrowF64.length} are meaningless. */
  data: Float64Array;
  /** Number of entries. */
  length = 0;
  constructor(capacity = 256) {
    this.data = new Float64Array(capacity);
  }
  /** Appends `v`; returns its index. */
  push(v: number): number {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length] = v;
    return this.length++;
  }
  /** The entries as a plain array. */
  toArray(): number[] {
    return Array.from(this.data.subarray(0, this.length));
  }
}
