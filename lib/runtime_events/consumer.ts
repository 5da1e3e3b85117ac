/**
 * The runtime_events consumer: a cursor over a ring file or in-memory image,
 * behaving like OCaml 5.3's `caml_runtime_events_read_poll` and the OCaml
 * callbacks of `Runtime_events`, but raising a typed error with a location
 * where OCaml returns `E_CORRUPT_STREAM` (and in a few cases where OCaml
 * would read stale or out-of-bounds memory). A file is read ring by ring,
 * only the parts its header says are in use.
 *
 * @module
 */

import { NUM_ALLOC_BUCKETS, RuntimeMessageType, UserMessageType } from "./enums.ts";
import { RuntimeEventsFormatError, RuntimeEventsLimitError } from "./errors.ts";
import {
  CUSTOM_EVENT_NAME_LENGTH,
  eventsFilePath,
  MAX_CUSTOM_EVENTS,
  MAX_MSG_LENGTH,
  METADATA_HEADER_SIZE,
  MetadataField,
  type MetadataHeader,
  readMetadataHeader,
  RING_HEADER_SIZE,
} from "./layout.ts";

/** Most domains OCaml 5.3 allows (`Max_domains_max`); larger headers are corrupt. */
export const MAX_DOMAINS_MAX = 4096;

/** A user event as seen by the consumer: its id and the name found in the file. */
export interface UserEventInfo {
  /** Index in the custom event name table (the header word's id). */
  readonly id: number;
  /** Name decoded as UTF-8 (invalid bytes become U+FFFD). */
  readonly name: string;
  /** Raw name bytes, up to the first NUL (at most 128 bytes). */
  readonly nameBytes: Uint8Array;
}

/** Decoder for the payload of custom user events with a given name. */
export interface CustomEventDecoder<T = unknown> {
  /** Decodes the payload bytes (padding already removed). */
  decode(payload: Uint8Array): T;
  /** Text `events dump` prints after `custom `; default: JSON of the value. */
  format?(value: T): string;
}

/**
 * Custom event decoders by event name, as OCaml consumers register their
 * custom types to get decoded values.
 */
export class DecoderRegistry {
  #byName = new Map<string, CustomEventDecoder<unknown>>();

  /** Registers (or replaces) the decoder for events named `name`. */
  register<T>(name: string, decoder: CustomEventDecoder<T>): this {
    this.#byName.set(name, decoder as CustomEventDecoder<unknown>);
    return this;
  }

  /** The decoder for `name`, if any. */
  get(name: string): CustomEventDecoder<unknown> | undefined {
    return this.#byName.get(name);
  }

  /** Names with a registered decoder. */
  names(): string[] {
    return [...this.#byName.keys()];
  }
}

/**
 * Callbacks of {@linkcode RuntimeEventsCursor.readPoll}, mirroring
 * `Runtime_events.Callbacks`. Integer payloads are given as OCaml callbacks
 * see them: timestamps as int64, counters, alloc buckets, lifecycle data and
 * user ints as OCaml ints (the low 63 bits, signed). A callback that throws
 * stops the poll; the event is then delivered again by the next poll, as in
 * OCaml.
 */
export interface ConsumerCallbacks {
  /** A runtime phase (a `RuntimePhase` ordinal) begins. */
  runtimeBegin?(domain: number, ts: bigint, phase: number): void;
  /** A runtime phase ends. */
  runtimeEnd?(domain: number, ts: bigint, phase: number): void;
  /** A runtime counter (a `RuntimeCounter` ordinal) and its value. */
  runtimeCounter?(domain: number, ts: bigint, counter: number, value: bigint): void;
  /** The 20 allocation buckets of an EV_ALLOC message. */
  alloc?(domain: number, ts: bigint, buckets: bigint[]): void;
  /** `data` is `null` when the payload is 0 or absent (OCaml's `None`). */
  lifecycle?(domain: number, ts: bigint, event: number, data: bigint | null): void;
  /**
   * Unread data was overwritten: `words` is the number of ring words
   * skipped (OCaml's value, a C int), not a number of events.
   */
  lostEvents?(domain: number, words: number): void;
  /** A unit user event. */
  userUnit?(domain: number, ts: bigint, event: UserEventInfo): void;
  /** An int user event (the value as OCaml reads it back). */
  userInt?(domain: number, ts: bigint, event: UserEventInfo, value: bigint): void;
  /** A span user event boundary. */
  userSpan?(domain: number, ts: bigint, event: UserEventInfo, span: "begin" | "end"): void;
  /**
   * A custom user event. `payload` is a view into the image (copy it to keep
   * it); `decoded` is the registered decoder's result, or `undefined`.
   */
  userCustom?(
    domain: number,
    ts: bigint,
    event: UserEventInfo,
    payload: Uint8Array,
    decoded: unknown,
  ): void;
  /**
   * Called for every message read (padding included), before its typed
   * callback, with its absolute ring position and length in words and the
   * header's user bit and type field. For statistics and tools.
   */
  message?(domain: number, position: number, words: number, isUser: boolean, type: number): void;
}

/** Options of {@linkcode RuntimeEventsCursor}. */
export interface CursorOptions {
  /** Decoders for custom events, by event name. */
  decoders?: DecoderRegistry;
  /**
   * Most bytes of ring data held at once when reading a {@linkcode RingSource}
   * (default {@linkcode RING_WINDOW_BYTES}; at least 8 KiB, the longest message).
   */
  windowBytes?: number;
}

/**
 * Random access to the bytes of a ring file, for a cursor that reads only
 * what it needs, ring by ring (see {@linkcode RingFileSource}).
 */
export interface RingSource {
  /** Current size in bytes. */
  size(): number;
  /** Reads up to `dst.length` bytes at `offset` into `dst`; returns how many were read. */
  readAt(offset: number, dst: Uint8Array): number;
  /** Called at the end of each poll: a source may close its file until the next read. */
  release?(): void;
}

/**
 * A {@linkcode RingSource} over a regular file, opened when a poll first
 * reads and closed at its end: a cursor holds no file handle between polls,
 * and follows a file replaced by a rename.
 */
export class RingFileSource implements RingSource {
  #file: Deno.FsFile | null = null;
  /** A source reading `path`. */
  constructor(readonly path: string) {}
  #open(): Deno.FsFile {
    return this.#file ??= Deno.openSync(this.path, { read: true });
  }
  size(): number {
    return this.#open().statSync().size;
  }
  readAt(offset: number, dst: Uint8Array): number {
    const f = this.#open();
    f.seekSync(offset, Deno.SeekMode.Start);
    let got = 0;
    while (got < dst.length) {
      const n = f.readSync(dst.subarray(got));
      if (n === null || n === 0) break;
      got += n;
    }
    return got;
  }
  release(): void {
    this.#file?.close();
    this.#file = null;
  }
}

/**
 * Most bytes read from a file that is not a regular file (a pipe, a FIFO, a
 * device), whose size cannot be known beforehand: 256 MiB, four times OCaml's
 * default ring file (128 rings of 2^16 words, 65 MiB).
 */
export const STREAM_IMAGE_LIMIT = 256 * 1024 * 1024;
/** Bytes of ring data a file-backed cursor holds at once. */
export const RING_WINDOW_BYTES = 1 << 20;

const TWO32 = 4294967296;
const MAX_SAFE_HI = 0x1fffff; // hi word of a u64 that is still a safe integer
const utf8 = new TextDecoder("utf-8");
const NAMES_SIZE = BigInt(MAX_CUSTOM_EVENTS * CUSTOM_EVENT_NAME_LENGTH);

/**
 * A reading position in every ring of a runtime_events image. Like OCaml's
 * cursor it starts at position 0 of each ring, so data the producer has
 * already overwritten is reported through `lostEvents`.
 *
 * Over bytes in memory (a producer's image), every poll reads the image as it
 * is then. Over a {@linkcode RingSource} (a file), each poll reads the ring
 * headers, then the used part of each ring through a window of at most
 * {@linkcode RING_WINDOW_BYTES}: an empty 2 GiB file costs a few kilobytes.
 *
 * @example Poll a producer's live image (`RuntimeEventsCursor.openSync(path)` for a file)
 * ```ts
 * import { RuntimeEventsCursor, RuntimeEventsProducer, RuntimePhase } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const producer = new RuntimeEventsProducer({ maxDomains: 1, logWsize: 10, pid: 7 });
 * producer.start();
 * const cursor = new RuntimeEventsCursor(producer.bytes);
 * let begins = 0;
 * const callbacks = { runtimeBegin: () => void begins++ };
 * producer.begin(0, RuntimePhase.EV_MAJOR);
 * cursor.readPoll(callbacks);
 * producer.begin(0, RuntimePhase.EV_MINOR);
 * cursor.readPoll(callbacks);
 * assert.equal(begins, 2);
 * ```
 */
export class RuntimeEventsCursor {
  /** The metadata header as read when the cursor was created. */
  readonly metadata: MetadataHeader;
  /** Path of the file, if opened from one. */
  readonly path: string | null;
  /** The image, when the cursor reads bytes in memory. */
  #mem: Uint8Array | null;
  /** The file, when the cursor reads on demand. */
  #src: RingSource | null;
  // The window: #win[0, #winEnd - #winBase) holds bytes [#winBase, #winEnd) of the file. In
  // memory it is the whole image.
  #win: Uint8Array;
  #wv: DataView;
  #winBase = 0;
  #winEnd = 0;
  #hdrBuf = new Uint8Array(16);
  #positions: Float64Array;
  #nextReadDomain = 0;
  #inPoll = false;
  #decoders: DecoderRegistry | undefined;
  #windowBytes: number;
  #names = new Map<number, UserEventInfo>();

  /**
   * Makes a cursor over an image in memory, or over a {@linkcode RingSource}
   * read on demand. An image's bytes are not copied: a live producer's image
   * can be polled repeatedly. Throws {@linkcode RuntimeEventsFormatError} if
   * the metadata header is missing or declares more than 4096 domains (as
   * OCaml's create_cursor does).
   */
  constructor(
    image: Uint8Array | ArrayBuffer | RingSource,
    options: CursorOptions = {},
    path?: string,
  ) {
    this.path = path ?? null;
    this.#decoders = options.decoders;
    this.#windowBytes = Math.max(MAX_MSG_LENGTH * 8, options.windowBytes ?? RING_WINDOW_BYTES);
    let header: DataView;
    let length: number;
    if (image instanceof Uint8Array || image instanceof ArrayBuffer) {
      const bytes = image instanceof Uint8Array ? image : new Uint8Array(image);
      this.#mem = bytes;
      this.#src = null;
      this.#win = bytes;
      this.#winEnd = bytes.byteLength;
      header = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      this.#wv = header;
      length = bytes.byteLength;
    } else {
      this.#mem = null;
      this.#src = image;
      this.#win = new Uint8Array(0);
      this.#wv = new DataView(this.#win.buffer);
      const head = new Uint8Array(METADATA_HEADER_SIZE);
      try {
        length = image.readAt(0, head);
      } finally {
        image.release?.();
      }
      header = new DataView(head.buffer);
    }
    if (length < METADATA_HEADER_SIZE) {
      throw new RuntimeEventsFormatError(
        `file is ${length} bytes, shorter than the ${METADATA_HEADER_SIZE}-byte metadata header`,
        null,
        0,
      );
    }
    this.metadata = readMetadataHeader(header);
    if (this.metadata.maxDomains > BigInt(MAX_DOMAINS_MAX)) {
      throw new RuntimeEventsFormatError(
        `max_domains ${this.metadata.maxDomains} exceeds ${MAX_DOMAINS_MAX}`,
        null,
        8,
      );
    }
    this.#positions = new Float64Array(Number(this.metadata.maxDomains));
  }

  /** Opens a `.events` file: see {@linkcode openSync}. */
  static open(path: string, options: CursorOptions = {}): Promise<RuntimeEventsCursor> {
    return Promise.resolve().then(() => RuntimeEventsCursor.openSync(path, options));
  }

  /**
   * Opens `<dir>/<pid>.events`, the file a process with that pid writes, as
   * OCaml's `Runtime_events.create_cursor (Some (dir, pid))` does.
   */
  static openPid(
    dir: string,
    pid: number,
    options: CursorOptions = {},
  ): Promise<RuntimeEventsCursor> {
    return RuntimeEventsCursor.open(eventsFilePath(dir, pid), options);
  }

  /**
   * Opens a `.events` file. A regular file is read on demand at each poll
   * (through a {@linkcode RingFileSource}: only the headers and the used part
   * of each ring, and nothing held open between polls). Anything else (a
   * pipe, a device) is read once, as far as its header says the file goes and
   * at most {@linkcode STREAM_IMAGE_LIMIT} bytes, else
   * {@linkcode RuntimeEventsLimitError}.
   */
  static openSync(path: string, options: CursorOptions = {}): RuntimeEventsCursor {
    const file = Deno.openSync(path, { read: true });
    let image: Uint8Array;
    try {
      const st = file.statSync();
      if (st.isDirectory) throw new Deno.errors.IsADirectory(`${path} is a directory`);
      if (st.isFile) {
        file.close();
        return new RuntimeEventsCursor(new RingFileSource(path), options, path);
      }
      image = readStreamImage(file, path);
    } finally {
      try {
        file.close();
      } catch { /* closed above */ }
    }
    return new RuntimeEventsCursor(image, options, path);
  }

  /**
   * Follows a file that was replaced since the cursor was made, keeping the
   * read positions. A cursor reading a file on demand reads it afresh at each
   * poll anyway; this forgets the user event names seen. A cursor over an
   * image read from a file re-reads the file. The metadata header is not
   * re-read.
   */
  async reload(): Promise<void> {
    if (this.path === null) throw new Error("runtime_events: cursor has no file to reload");
    this.#names.clear();
    if (this.#src !== null) {
      this.#winBase = this.#winEnd = 0;
      return;
    }
    const bytes = await Deno.readFile(this.path);
    this.#mem = this.#win = bytes;
    this.#wv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#winBase = 0;
    this.#winEnd = bytes.byteLength;
  }

  /** Current read position (absolute, in words) in `domain`'s ring. */
  position(domain: number): number {
    return this.#positions[domain];
  }

  /**
   * Reads available events from every ring, calling `callbacks`; returns the
   * number of events consumed. `maxEvents` 0 means no limit. As in OCaml,
   * padding and type-0 messages (including user unit events) are not counted,
   * and each ring is read at least one message deep even past the limit.
   */
  readPoll(callbacks: ConsumerCallbacks, maxEvents = 0): number {
    if (this.#inPoll) throw new Error("Runtime_events: poll called concurrently or reentrant");
    this.#inPoll = true;
    try {
      return this.#poll(callbacks, maxEvents);
    } finally {
      this.#inPoll = false;
      this.#src?.release?.();
    }
  }

  /** Polls until a poll consumes nothing; returns the total consumed. */
  readAll(callbacks: ConsumerCallbacks): number {
    let total = 0;
    for (;;) {
      const n = this.readPoll(callbacks);
      if (n === 0) return total;
      total += n;
    }
  }

  /** A u64 of the image or window at index `i` (file offset `offset`), refused past 2^53. */
  #u64(view: DataView, i: number, offset: number, domain: number, what: string): number {
    const hi = view.getUint32(i + 4, true);
    if (hi > MAX_SAFE_HI) {
      throw new RuntimeEventsFormatError(`${what} is beyond 2^53`, domain, offset);
    }
    return hi * TWO32 + view.getUint32(i, true);
  }

  /** Checks the header fields that size the rings against the file's size. */
  #checkFile(size: number): void {
    const md = this.metadata;
    if (md.headersOffset > BigInt(size)) {
      throw new RuntimeEventsFormatError(
        `headers_offset ${md.headersOffset} beyond end of file (${size} bytes)`,
        null,
        MetadataField.headersOffset,
      );
    }
    const elements = md.ringSizeElements;
    if (elements === 0n || elements * 8n !== md.ringSizeBytes || elements > 1n << 30n) {
      throw new RuntimeEventsFormatError(
        `ring_size_elements ${elements} does not match ring_size_bytes ${md.ringSizeBytes}`,
        null,
        MetadataField.ringSizeElements,
      );
    }
    if ((elements & (elements - 1n)) !== 0n) {
      throw new RuntimeEventsFormatError(
        `ring_size_elements ${elements} is not a power of two`,
        null,
        MetadataField.ringSizeElements,
      );
    }
  }

  /**
   * Where ring `domain`'s header and data are; throws if either lies beyond
   * the end of the file. The error names the offset of the part that is cut
   * when it starts inside the file, else the header field that disagrees with
   * the layout OCaml computes, else the end of the file (it was truncated).
   */
  #ringPlace(domain: number, size: number): { hdr: number; ring: number } {
    const md = this.metadata;
    const limit = BigInt(size);
    const d = BigInt(domain);
    const hdrBig = md.headersOffset + d * md.ringHeaderSizeBytes;
    // Only a ring header's head and tail are read; ring_header_size_bytes is the stride.
    if (hdrBig + 16n > limit) {
      if (hdrBig < limit) {
        throw new RuntimeEventsFormatError(
          `ring header beyond end of file (${size} bytes)`,
          domain,
          Number(hdrBig),
        );
      }
      const where = `headers_offset ${md.headersOffset} + ${domain} × ring_header_size_bytes ` +
        `${md.ringHeaderSizeBytes} puts the header of ring ${domain} at byte ${hdrBig}, ` +
        `beyond the end of the file (${size} bytes)`;
      if (md.ringHeaderSizeBytes !== BigInt(RING_HEADER_SIZE)) {
        throw new RuntimeEventsFormatError(
          `ring_header_size_bytes ${md.ringHeaderSizeBytes} is not ${RING_HEADER_SIZE}: ${where}`,
          domain,
          MetadataField.ringHeaderSizeBytes,
        );
      }
      if (md.headersOffset !== BigInt(METADATA_HEADER_SIZE)) {
        throw new RuntimeEventsFormatError(
          `headers_offset ${md.headersOffset} is not ${METADATA_HEADER_SIZE}: ${where}`,
          domain,
          MetadataField.headersOffset,
        );
      }
      throw new RuntimeEventsFormatError(`file truncated: ${where}`, domain, size);
    }
    const ringBig = md.dataOffset + d * md.ringSizeBytes;
    if (ringBig + md.ringSizeBytes > limit) {
      if (ringBig < limit) {
        throw new RuntimeEventsFormatError(
          `ring data (${md.ringSizeBytes} bytes) beyond end of file (${size} bytes)`,
          domain,
          Number(ringBig),
        );
      }
      const headersEnd = md.headersOffset + md.maxDomains * md.ringHeaderSizeBytes;
      const where = `puts ring ${domain} at byte ${ringBig} (data_offset + ${domain} × ` +
        `ring_size_bytes ${md.ringSizeBytes}), beyond the end of the file (${size} bytes)`;
      if (md.dataOffset !== headersEnd) {
        throw new RuntimeEventsFormatError(
          `data_offset ${md.dataOffset} (the ring headers end at byte ${headersEnd}) ${where}`,
          domain,
          MetadataField.dataOffset,
        );
      }
      throw new RuntimeEventsFormatError(
        `file truncated: data_offset ${md.dataOffset} ${where}`,
        domain,
        size,
      );
    }
    return { hdr: Number(hdrBig), ring: Number(ringBig) };
  }

  /** Reads `want` bytes (at least `need`) of ring data at file offset `at` into the window. */
  #load(at: number, need: number, want: number, domain: number): void {
    const src = this.#src!;
    if (this.#win.length < want) {
      this.#win = new Uint8Array(Math.max(want, Math.min(this.#windowBytes, this.#win.length * 2)));
      this.#wv = new DataView(this.#win.buffer);
    }
    const got = src.readAt(at, this.#win.subarray(0, want));
    this.#winBase = at;
    this.#winEnd = at + got;
    if (got < need) {
      throw new RuntimeEventsFormatError(
        `file ends at byte ${at + got}, inside ring ${domain}'s data`,
        domain,
        at + got,
      );
    }
  }

  #poll(cb: ConsumerCallbacks, maxEvents: number): number {
    const md = this.metadata;
    const mem = this.#mem;
    const src = this.#src;
    const size = mem !== null ? mem.byteLength : src!.size();
    this.#checkFile(size);
    if (src !== null) this.#winBase = this.#winEnd = 0; // the file may have changed
    // The window, in locals for the loop (refreshed after each load).
    let wv = this.#wv, winBase = this.#winBase, winEnd = this.#winEnd;
    const ringWords = Number(md.ringSizeElements);
    const ringBytes = ringWords * 8;
    const maxDomains = Number(md.maxDomains);
    const startDomain = this.#nextReadDomain;
    const positions = this.#positions;
    const hdrBuf = this.#hdrBuf;
    const hdrView = new DataView(hdrBuf.buffer);
    let consumed = 0;

    for (let i = 0; i < maxDomains; i++) {
      const domain = (startDomain + i) % maxDomains;
      const { hdr, ring } = this.#ringPlace(domain, size);
      let head = 0, tail = 0;
      if (src !== null) {
        // A file is read once per ring per poll: its head and tail, then the ring.
        if (src.readAt(hdr, hdrBuf) < 16) {
          throw new RuntimeEventsFormatError(
            `file ends inside ring ${domain}'s header`,
            domain,
            hdr,
          );
        }
        head = this.#u64(hdrView, 0, hdr, domain, "ring head");
        tail = this.#u64(hdrView, 8, hdr + 8, domain, "ring tail");
      }

      for (;;) {
        if (mem !== null) {
          // An image in memory is read live, as OCaml reads the mapped file.
          head = this.#u64(wv, hdr, hdr, domain, "ring head");
          tail = this.#u64(wv, hdr + 8, hdr + 8, domain, "ring tail");
        }
        if (tail > head && tail - head > ringWords) {
          throw new RuntimeEventsFormatError(
            `ring holds ${
              tail - head
            } words (head ${head}, tail ${tail}) but has room for ${ringWords}`,
            domain,
            hdr,
          );
        }
        if (head > positions[domain]) {
          // Data we had not read was overwritten: OCaml passes the distance
          // in words, as a C int.
          cb.lostEvents?.(domain, (head - positions[domain]) | 0);
          positions[domain] = head;
        }
        const pos = positions[domain];
        if (pos >= tail) break;

        const masked = pos % ringWords;
        const at = ring + masked * 8;
        // Index of the message in the window: in memory, the window is the whole image. From a
        // source, a window holds the ring's bytes from here that may hold unread messages, up
        // to the ring's end or tail.
        let a = at;
        if (src !== null) {
          if (at < winBase || at + 8 > winEnd) {
            const avail = Math.min(ringBytes - masked * 8, (tail - pos) * 8);
            this.#load(at, 8, Math.min(avail, this.#windowBytes), domain);
            wv = this.#wv;
            winBase = this.#winBase;
            winEnd = this.#winEnd;
          }
          a = at - winBase;
        }
        const high = wv.getUint32(a + 4, true);
        const length = (high >>> 22) & 0x3ff;
        if (length > MAX_MSG_LENGTH || masked + length > ringWords) {
          throw new RuntimeEventsFormatError(
            `message of ${length} words crosses the end of the ring`,
            domain,
            at,
          );
        }
        const isUser = (high & (1 << 21)) !== 0;
        const type = (high >>> 17) & 0xf;
        const id = (high >>> 4) & 0x1fff;
        if (length === 0 || (length < 2 && (isUser || type !== RuntimeMessageType.EV_INTERNAL))) {
          throw new RuntimeEventsFormatError(`message of invalid length ${length}`, domain, at);
        }
        if (pos + length > tail) {
          throw new RuntimeEventsFormatError(
            `message of ${length} words runs past the ring tail ${tail}`,
            domain,
            at,
          );
        }
        if (src !== null && at + length * 8 > winEnd) {
          const avail = Math.min(ringBytes - masked * 8, (tail - pos) * 8);
          this.#load(at, length * 8, Math.min(avail, this.#windowBytes), domain);
          wv = this.#wv;
          winBase = this.#winBase;
          winEnd = this.#winEnd;
          a = 0;
        }
        cb.message?.(domain, pos, length, isUser, type);
        if (!isUser) {
          this.#runtime(cb, domain, a, type, id, length);
        } else {
          this.#user(cb, domain, a, type, id, length);
        }
        // OCaml counts every message whose type field is not 0.
        if (type !== 0) consumed++;
        positions[domain] = pos + length;
        if (!(positions[domain] < tail && (maxEvents === 0 || consumed < maxEvents))) break;
      }
      this.#nextReadDomain = domain + 1 === maxDomains ? 0 : domain + 1;
    }
    return consumed;
  }

  /** A runtime message at window index `a`. */
  #runtime(
    cb: ConsumerCallbacks,
    domain: number,
    a: number,
    type: number,
    id: number,
    length: number,
  ): void {
    const view = this.#wv;
    switch (type) {
      case RuntimeMessageType.EV_BEGIN:
        cb.runtimeBegin?.(domain, view.getBigInt64(a + 8, true), id);
        break;
      case RuntimeMessageType.EV_EXIT:
        cb.runtimeEnd?.(domain, view.getBigInt64(a + 8, true), id);
        break;
      case RuntimeMessageType.EV_COUNTER:
        if (length < 3) {
          throw new RuntimeEventsFormatError(
            "counter message without a value",
            domain,
            this.#winBase + a,
          );
        }
        cb.runtimeCounter?.(
          domain,
          view.getBigInt64(a + 8, true),
          id,
          BigInt.asIntN(63, view.getBigUint64(a + 16, true)),
        );
        break;
      case RuntimeMessageType.EV_ALLOC: {
        if (length < 2 + NUM_ALLOC_BUCKETS) {
          throw new RuntimeEventsFormatError(
            `alloc message of ${length} words, needs ${2 + NUM_ALLOC_BUCKETS}`,
            domain,
            this.#winBase + a,
          );
        }
        if (cb.alloc) {
          const buckets = new Array<bigint>(NUM_ALLOC_BUCKETS);
          for (let i = 0; i < NUM_ALLOC_BUCKETS; i++) {
            buckets[i] = BigInt.asIntN(63, view.getBigUint64(a + 16 + 8 * i, true));
          }
          cb.alloc(domain, view.getBigInt64(a + 8, true), buckets);
        }
        break;
      }
      case RuntimeMessageType.EV_LIFECYCLE:
        if (cb.lifecycle) {
          // EV_RING_STOP has no payload: OCaml reads it as 0, i.e. None.
          const raw = length > 2 ? view.getBigInt64(a + 16, true) : 0n;
          cb.lifecycle(
            domain,
            view.getBigInt64(a + 8, true),
            id,
            raw === 0n ? null : BigInt.asIntN(63, raw),
          );
        }
        break;
      default:
        // EV_INTERNAL (padding), EV_FLUSH and unknown types carry nothing.
        break;
    }
  }

  /** A user message at window index `a`. */
  #user(
    cb: ConsumerCallbacks,
    domain: number,
    a: number,
    type: number,
    id: number,
    length: number,
  ): void {
    const at = this.#winBase + a;
    const event = this.#userEvent(domain, id, at);
    const view = this.#wv;
    const ts = view.getBigInt64(a + 8, true);
    switch (type) {
      case UserMessageType.EV_USER_MSG_TYPE_UNIT:
        cb.userUnit?.(domain, ts, event);
        break;
      case UserMessageType.EV_USER_MSG_TYPE_SPAN_BEGIN:
        cb.userSpan?.(domain, ts, event, "begin");
        break;
      case UserMessageType.EV_USER_MSG_TYPE_SPAN_END:
        cb.userSpan?.(domain, ts, event, "end");
        break;
      case UserMessageType.EV_USER_MSG_TYPE_INT:
        if (length < 3) {
          throw new RuntimeEventsFormatError("user int message without a value", domain, at);
        }
        cb.userInt?.(domain, ts, event, BigInt.asIntN(63, view.getBigUint64(a + 16, true)));
        break;
      default: {
        // Type 4 and the unused 5..15 are custom, as in OCaml's switch.
        const words = length - 2;
        if (words === 0) {
          throw new RuntimeEventsFormatError("custom event without payload", domain, at);
        }
        const win = this.#win;
        const last = words * 8 - 1;
        const padding = win[a + 16 + last];
        // The last byte counts the unused bytes; OCaml reads it as a signed
        // char, so values of 128 and more (or larger than the payload) are garbage.
        if (padding >= 128 || padding > last) {
          throw new RuntimeEventsFormatError(
            `custom event padding byte ${padding} exceeds its ${last}-byte payload`,
            domain,
            at + 16 + last,
          );
        }
        const payload = new Uint8Array(win.buffer, win.byteOffset + a + 16, last - padding);
        if (cb.userCustom) {
          const decoder = this.#decoders?.get(event.name);
          let decoded: unknown = undefined;
          if (decoder) {
            try {
              decoded = decoder.decode(payload);
            } catch (e) {
              // A decoder rejecting its payload means the payload is malformed.
              throw new RuntimeEventsFormatError(
                `decoder for "${event.name}" rejected the payload: ${
                  e instanceof Error ? e.message : String(e)
                }`,
                domain,
                at,
              );
            }
          }
          cb.userCustom(domain, ts, event, payload, decoded);
        }
        break;
      }
    }
  }

  #userEvent(domain: number, id: number, at: number): UserEventInfo {
    const cached = this.#names.get(id);
    if (cached !== undefined) return cached;
    const md = this.metadata;
    const size = this.#mem !== null ? this.#mem.byteLength : this.#src!.size();
    const end = md.customEventsOffset + BigInt(id + 1) * BigInt(CUSTOM_EVENT_NAME_LENGTH);
    if (end > BigInt(size)) {
      const expected = md.dataOffset + md.maxDomains * md.ringSizeBytes;
      if (md.customEventsOffset >= BigInt(size) && md.customEventsOffset !== expected) {
        throw new RuntimeEventsFormatError(
          `custom_events_offset ${md.customEventsOffset} puts the name of user event ${id} ` +
            `beyond the end of the file (${size} bytes); the rings end at byte ${expected}`,
          domain,
          MetadataField.customEventsOffset,
        );
      }
      throw new RuntimeEventsFormatError(
        `name of user event ${id} lies beyond the end of the file`,
        domain,
        at,
      );
    }
    const off = Number(md.customEventsOffset) + id * CUSTOM_EVENT_NAME_LENGTH;
    let slot: Uint8Array;
    if (this.#mem !== null) slot = this.#mem.subarray(off, off + CUSTOM_EVENT_NAME_LENGTH);
    else {
      slot = new Uint8Array(CUSTOM_EVENT_NAME_LENGTH);
      if (this.#src!.readAt(off, slot) < CUSTOM_EVENT_NAME_LENGTH) {
        throw new RuntimeEventsFormatError(
          `name of user event ${id} lies beyond the end of the file`,
          domain,
          at,
        );
      }
    }
    const nul = slot.indexOf(0);
    const nameBytes = slot.slice(0, nul < 0 ? CUSTOM_EVENT_NAME_LENGTH : nul);
    const info: UserEventInfo = { id, name: utf8.decode(nameBytes), nameBytes };
    this.#names.set(id, info);
    return info;
  }
}

/**
 * Reads a file that is not a regular file (a pipe, a device) as far as its
 * metadata header says the file goes, refusing more than
 * {@linkcode STREAM_IMAGE_LIMIT} bytes: `/dev/zero` or an endless pipe cannot
 * make the cursor read without end.
 */
function readStreamImage(file: Deno.FsFile, path: string): Uint8Array {
  const readInto = (dst: Uint8Array, from: number): number => {
    let got = from;
    while (got < dst.length) {
      const n = file.readSync(dst.subarray(got));
      if (n === null || n === 0) break;
      got += n;
    }
    return got;
  };
  const head = new Uint8Array(METADATA_HEADER_SIZE);
  const got = readInto(head, 0);
  if (got < METADATA_HEADER_SIZE) return head.slice(0, got);
  const md = readMetadataHeader(new DataView(head.buffer));
  const total = md.customEventsOffset + NAMES_SIZE;
  if (total > BigInt(STREAM_IMAGE_LIMIT)) {
    throw new RuntimeEventsLimitError(
      `${path} is not a regular file, and its header (custom_events_offset ` +
        `${md.customEventsOffset}) describes ${total} bytes, more than the ${STREAM_IMAGE_LIMIT} ` +
        `read from a pipe or device; copy it to a regular file`,
      STREAM_IMAGE_LIMIT,
      MetadataField.customEventsOffset,
    );
  }
  const image = new Uint8Array(Number(total));
  image.set(head);
  const n = readInto(image, METADATA_HEADER_SIZE);
  return n === image.length ? image : image.slice(0, n);
}
