/**
 * Following the ring file of a running program, reading only what is new.
 *
 * A real program writes its `<pid>.events` through a shared mapping: each
 * domain appends messages at its ring's tail and, when the ring is full,
 * advances the head over the oldest messages before overwriting them. OCaml's
 * consumer reads that mapping directly. Deno cannot map a file, so a
 * {@linkcode RingFollower} keeps a private copy of the file (a "mirror", laid
 * out like the file) and at each poll, for every ring:
 *
 * 1. reads the ring headers (head and tail of every ring);
 * 2. reads the ring words between the cursor's position (or the head, if it
 *    has moved past it) and the tail into the mirror;
 * 3. reads the headers again: anything below the new head may have been
 *    overwritten while it was being copied, so the mirror's head is set to
 *    the new head — exactly the check OCaml's consumer makes after copying a
 *    message;
 * 4. reads the names of user events met for the first time;
 * 5. runs an ordinary {@linkcode RuntimeEventsCursor} over the mirror, which
 *    reports the words skipped between its position and the head through
 *    `lostEvents`, as OCaml's `read_poll` does.
 *
 * The file is read through an open handle, so after the program removes it
 * (OCaml does at exit unless `OCAML_RUNTIME_EVENTS_PRESERVE` is set) the last
 * events can still be read.
 *
 * The mirror has the file's size (65 MiB with OCaml's defaults of 128 domains
 * and 2^16-word rings); pages never written stay unallocated on most systems.
 *
 * @module
 */

import { type ConsumerCallbacks, type CursorOptions, RuntimeEventsCursor } from "./consumer.ts";
import { RuntimeEventsFormatError } from "./errors.ts";
import {
  CUSTOM_EVENT_NAME_LENGTH,
  MAX_CUSTOM_EVENTS,
  METADATA_HEADER_SIZE,
  type MetadataHeader,
  readMetadataHeader,
  RING_HEADER_SIZE,
  RUNTIME_EVENTS_VERSION,
} from "./layout.ts";

/**
 * The file exists but its metadata header has not been written yet (a
 * program creates the file, sizes it, then fills the header): try again.
 */
export class RingNotReadyError extends Error {
  /** Makes the error for `path`. */
  constructor(readonly path: string, reason: string) {
    super(`${path}: ${reason}`);
    this.name = "RingNotReadyError";
  }
}

/** The few file operations a follower needs (replaceable in tests). */
export interface FollowedFile {
  /** Reads up to `dst.length` bytes at `offset`; returns how many were read. */
  readAt(offset: number, dst: Uint8Array): number;
  /** Current size in bytes. */
  size(): number;
  /** Closes the file. */
  close(): void;
}

/** A {@linkcode FollowedFile} over a Deno file handle. */
export class DenoFollowedFile implements FollowedFile {
  #file: Deno.FsFile;
  /** Opens `path` for reading. */
  constructor(path: string) {
    this.#file = Deno.openSync(path, { read: true });
  }
  readAt(offset: number, dst: Uint8Array): number {
    this.#file.seekSync(offset, Deno.SeekMode.Start);
    let got = 0;
    while (got < dst.length) {
      const n = this.#file.readSync(dst.subarray(got));
      if (n === null || n === 0) break;
      got += n;
    }
    return got;
  }
  size(): number {
    return this.#file.statSync().size;
  }
  close(): void {
    this.#file.close();
  }
}

const TWO32 = 4294967296;

function u64At(view: DataView, off: number, what: string, base: number): number {
  const hi = view.getUint32(off + 4, true);
  if (hi > 0x1fffff) {
    throw new RuntimeEventsFormatError(`${what} is beyond 2^53`, null, base + off);
  }
  return hi * TWO32 + view.getUint32(off, true);
}

/**
 * Incremental reader of a ring file that another process is writing. Each
 * {@linkcode RingFollower.poll} delivers the events written since the
 * previous one, and reports overwritten data as lost events.
 */
export class RingFollower {
  /** Path of the file. */
  readonly path: string;
  /** The metadata header. */
  readonly metadata: MetadataHeader;
  #file: FollowedFile;
  #mirror: Uint8Array;
  #mview: DataView;
  #cursor: RuntimeEventsCursor;
  #maxDomains: number;
  #ringWords: number;
  #headersOffset: number;
  #dataOffset: number;
  #namesOffset: number;
  #hdr: Uint8Array;
  #hview: DataView;
  #heads: Float64Array;
  #tails: Float64Array;
  #from: Float64Array;
  #nameLoaded = new Uint8Array(MAX_CUSTOM_EVENTS);
  #slot = new Uint8Array(CUSTOM_EVENT_NAME_LENGTH);
  #closed = false;

  /**
   * Opens a follower over `file`. Throws {@linkcode RingNotReadyError} if
   * the header is not written yet, `RuntimeEventsFormatError` if it is
   * inconsistent.
   */
  constructor(path: string, file: FollowedFile, options: CursorOptions = {}) {
    this.path = path;
    this.#file = file;
    const head = new Uint8Array(METADATA_HEADER_SIZE);
    if (file.readAt(0, head) < METADATA_HEADER_SIZE) {
      throw new RingNotReadyError(path, "shorter than the metadata header");
    }
    const md = readMetadataHeader(new DataView(head.buffer));
    if (md.version === 0n) throw new RingNotReadyError(path, "metadata header not written yet");
    if (md.version !== BigInt(RUNTIME_EVENTS_VERSION)) {
      throw new RuntimeEventsFormatError(`unsupported version ${md.version}`, null, 0);
    }
    const fail = (what: string, off: number): never => {
      throw new RuntimeEventsFormatError(what, null, off);
    };
    const maxDomains = md.maxDomains;
    const ringWords = md.ringSizeElements;
    if (maxDomains < 1n || maxDomains > 4096n) fail(`max_domains ${maxDomains} out of range`, 8);
    if (md.ringHeaderSizeBytes !== BigInt(RING_HEADER_SIZE)) {
      fail(`ring_header_size_bytes ${md.ringHeaderSizeBytes} is not ${RING_HEADER_SIZE}`, 16);
    }
    if (
      ringWords === 0n || ringWords > 1n << 30n || (ringWords & (ringWords - 1n)) !== 0n ||
      ringWords * 8n !== md.ringSizeBytes
    ) fail(`ring_size_elements ${ringWords} / ring_size_bytes ${md.ringSizeBytes} invalid`, 32);
    if (md.headersOffset !== BigInt(METADATA_HEADER_SIZE)) {
      fail(`headers_offset ${md.headersOffset}`, 40);
    }
    if (md.dataOffset !== md.headersOffset + maxDomains * BigInt(RING_HEADER_SIZE)) {
      fail(`data_offset ${md.dataOffset} does not follow the ring headers`, 48);
    }
    if (md.customEventsOffset !== md.dataOffset + maxDomains * md.ringSizeBytes) {
      fail(`custom_events_offset ${md.customEventsOffset} does not follow the rings`, 56);
    }
    const total = Number(md.customEventsOffset) + MAX_CUSTOM_EVENTS * CUSTOM_EVENT_NAME_LENGTH;
    const size = file.size();
    if (size < total) {
      fail(`file is ${size} bytes, its header describes ${total}`, 0);
    }
    this.metadata = md;
    this.#maxDomains = Number(maxDomains);
    this.#ringWords = Number(ringWords);
    this.#headersOffset = Number(md.headersOffset);
    this.#dataOffset = Number(md.dataOffset);
    this.#namesOffset = Number(md.customEventsOffset);
    this.#mirror = new Uint8Array(total);
    this.#mirror.set(head, 0);
    this.#mview = new DataView(this.#mirror.buffer);
    this.#hdr = new Uint8Array(this.#maxDomains * RING_HEADER_SIZE);
    this.#hview = new DataView(this.#hdr.buffer);
    this.#heads = new Float64Array(this.#maxDomains);
    this.#tails = new Float64Array(this.#maxDomains);
    this.#from = new Float64Array(this.#maxDomains);
    this.#cursor = new RuntimeEventsCursor(this.#mirror, options, path);
  }

  /** Opens the file at `path` (see the constructor for the errors). */
  static open(path: string, options: CursorOptions = {}): RingFollower {
    const file = new DenoFollowedFile(path);
    try {
      return new RingFollower(path, file, options);
    } catch (e) {
      file.close();
      throw e;
    }
  }

  /** Number of ring slots. */
  get maxDomains(): number {
    return this.#maxDomains;
  }

  /** The cursor's position (absolute, in words) in `domain`'s ring. */
  position(domain: number): number {
    return this.#cursor.position(domain);
  }

  /** The tail of `domain`'s ring at the last poll. */
  tail(domain: number): number {
    return this.#tails[domain];
  }

  #readHeaders(): void {
    const n = this.#file.readAt(this.#headersOffset, this.#hdr);
    if (n < this.#hdr.length) {
      throw new RuntimeEventsFormatError(
        "ring headers beyond end of file",
        null,
        this.#headersOffset,
      );
    }
  }

  #readWords(domain: number, from: number, to: number): void {
    const ringBase = this.#dataOffset + domain * this.#ringWords * 8;
    while (from < to) {
      const masked = from % this.#ringWords;
      const words = Math.min(to - from, this.#ringWords - masked);
      const off = ringBase + masked * 8;
      this.#file.readAt(off, this.#mirror.subarray(off, off + words * 8));
      from += words;
    }
  }

  #loadNames(domain: number, from: number, to: number): void {
    const ringBase = this.#dataOffset + domain * this.#ringWords * 8;
    let pos = from;
    while (pos < to) {
      const at = ringBase + (pos % this.#ringWords) * 8;
      const high = this.#mview.getUint32(at + 4, true);
      const length = (high >>> 22) & 0x3ff;
      if (length === 0) return; // corrupt: the cursor will say so
      if ((high & (1 << 21)) !== 0) {
        const id = (high >>> 4) & 0x1fff;
        if (!this.#nameLoaded[id]) {
          const off = this.#namesOffset + id * CUSTOM_EVENT_NAME_LENGTH;
          this.#file.readAt(off, this.#slot);
          this.#mirror.set(this.#slot, off);
          this.#nameLoaded[id] = 1;
        }
      }
      pos += length;
    }
  }

  /**
   * Reads what the program wrote since the last poll and delivers it to
   * `callbacks` (lost data first, through `lostEvents`). Returns the number
   * of events consumed, counted as OCaml's `read_poll` counts them.
   */
  poll(callbacks: ConsumerCallbacks): number {
    if (this.#closed) throw new Error(`${this.path}: follower closed`);
    const W = this.#ringWords;
    const hv = this.#hview;
    this.#readHeaders();
    const from = this.#from;
    for (let d = 0; d < this.#maxDomains; d++) {
      const o = d * RING_HEADER_SIZE;
      const head = u64At(hv, o, "ring head", this.#headersOffset);
      const tail = u64At(hv, o + 8, "ring tail", this.#headersOffset);
      this.#heads[d] = head;
      this.#tails[d] = tail;
      const start = Math.max(this.#cursor.position(d), head);
      from[d] = start;
      // A torn or corrupt header is left for the cursor to report.
      if (tail > start && tail - head <= W) this.#readWords(d, start, tail);
    }
    this.#readHeaders();
    for (let d = 0; d < this.#maxDomains; d++) {
      const o = d * RING_HEADER_SIZE;
      const head2 = u64At(hv, o, "ring head", this.#headersOffset);
      const head = Math.max(this.#heads[d], head2);
      this.#heads[d] = head;
      const tail = this.#tails[d];
      const mo = this.#headersOffset + o;
      const mv = this.#mview;
      mv.setUint32(mo, head % TWO32, true);
      mv.setUint32(mo + 4, Math.floor(head / TWO32), true);
      mv.setUint32(mo + 8, tail % TWO32, true);
      mv.setUint32(mo + 12, Math.floor(tail / TWO32), true);
      const start = Math.max(from[d], head);
      if (tail > start && tail - head <= W) this.#loadNames(d, start, tail);
    }
    return this.#cursor.readPoll(callbacks);
  }

  /** Closes the file. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#file.close();
  }
}
