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

/** Collects a trace in memory. */
export class MemorySink implements TraceSink {
  private buf = new Uint8Array(1 << 16);
  private len = 0;

  write(bytes: Uint8Array): void {
    if (this.len + bytes.length > this.buf.length) {
      let size = this.buf.length * 2;
      while (size < this.len + bytes.length) size *= 2;
      const next = new Uint8Array(size);
      next.set(this.buf.subarray(0, this.len));
      this.buf = next;
    }
    this.buf.set(bytes, this.len);
    this.len += bytes.length;
  }

  /** Bytes written so far (a view; copy it before writing more if you keep it). */
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }

  /** Number of bytes written so far. */
  get size(): number {
    return this.len;
  }
}

/** Writes packets to an open file, synchronously, each fully. */
export class FileSink implements TraceSink {
  /** A sink writing to `file`, which `close` closes. */
  constructor(private readonly file: Deno.FsFile) {}

  /** Writes the whole packet. */
  write(bytes: Uint8Array): void {
    let off = 0;
    while (off < bytes.length) off += this.file.writeSync(bytes.subarray(off));
  }

  close(): void {
    this.file.close();
  }
}
