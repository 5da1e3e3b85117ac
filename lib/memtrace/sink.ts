/**
 * Where a trace writer's packets go. Packets are handed over whole, one `write` each; the
 * buffer is reused afterwards, so a sink must copy or consume it before returning.
 * @module
 */

/** Destination of encoded packets. */
export interface TraceSink {
  /** Takes one whole packet. The bytes are only valid during the call. */
  write(bytes: Uint8Array): void;
  /** Called once by `Writer.close`. */
  close?(): void;
}

/** Collects a trace in memory. Packets are copied into chunks, each as large as everything
 * before it (so that nothing is copied twice while writing); {@linkcode bytes} joins them. */
export class MemorySink implements TraceSink {
  /** Full chunks, in order. */
  #full: Uint8Array[] = [];
  #cur = new Uint8Array(1 << 16);
  #curLen = 0;
  #len = 0;

  /** Copies the packet. */
  write(bytes: Uint8Array): void {
    let off = 0;
    while (off < bytes.length) {
      if (this.#curLen === this.#cur.length) {
        this.#full.push(this.#cur);
        this.#cur = new Uint8Array(Math.max(this.#len, bytes.length - off));
        this.#curLen = 0;
      }
      const n = Math.min(bytes.length - off, this.#cur.length - this.#curLen);
      this.#cur.set(n === bytes.length ? bytes : bytes.subarray(off, off + n), this.#curLen);
      this.#curLen += n;
      off += n;
    }
    this.#len += bytes.length;
  }

  /** Bytes written so far (a view; copy it before writing more if you keep it). */
  bytes(): Uint8Array {
    if (this.#full.length > 0) {
      const all = new Uint8Array(Math.max(2 * this.#len, 1 << 16));
      let at = 0;
      for (const c of this.#full) {
        all.set(c, at);
        at += c.length;
      }
      all.set(this.#cur.subarray(0, this.#curLen), at);
      this.#full = [];
      this.#cur = all;
      this.#curLen = this.#len;
    }
    return this.#cur.subarray(0, this.#len);
  }

  /** Number of bytes written so far. */
  get size(): number {
    return this.#len;
  }
}

/** Writes packets to an open file, synchronously, each fully. */
export class FileSink implements TraceSink {
  readonly #file: Deno.FsFile;
  /** A sink writing to `file`, which `close` closes. */
  constructor(file: Deno.FsFile) {
    this.#file = file;
  }

  /** Writes the whole packet. */
  write(bytes: Uint8Array): void {
    let off = 0;
    while (off < bytes.length) off += this.#file.writeSync(bytes.subarray(off));
  }

  /** Closes the file. */
  close(): void {
    this.#file.close();
  }
}
