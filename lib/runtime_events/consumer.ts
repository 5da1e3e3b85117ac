/**
 * The runtime_events consumer: a cursor over a ring file or in-memory image,
 * behaving like OCaml 5.3's `caml_runtime_events_read_poll` and the OCaml
 * callbacks of `Runtime_events`, but raising a typed error with a location
 * where OCaml returns `E_CORRUPT_STREAM` (and in a few cases where OCaml
 * would read stale or out-of-bounds memory).
 *
 * @module
 */

import { NUM_ALLOC_BUCKETS, RuntimeMessageType, UserMessageType } from "./enums.ts";
import { RuntimeEventsFormatError } from "./errors.ts";
import {
  CUSTOM_EVENT_NAME_LENGTH,
  eventsFilePath,
  MAX_MSG_LENGTH,
  METADATA_HEADER_SIZE,
  type MetadataHeader,
  readMetadataHeader,
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
}

const TWO32 = 4294967296;
const MAX_SAFE_HI = 0x1fffff; // hi word of a u64 that is still a safe integer
const utf8 = new TextDecoder("utf-8");

/**
 * A reading position in every ring of a runtime_events image. Like OCaml's
 * cursor it starts at position 0 of each ring, so data the producer has
 * already overwritten is reported through `lostEvents`.
 */
export class RuntimeEventsCursor {
  /** The metadata header as read when the cursor was created. */
  readonly metadata: MetadataHeader;
  /** Path of the file, if opened from one. */
  readonly path: string | null;
  #bytes: Uint8Array;
  #view: DataView;
  #positions: Float64Array;
  #nextReadDomain = 0;
  #inPoll = false;
  #decoders: DecoderRegistry | undefined;
  #names = new Map<number, UserEventInfo>();

  /**
   * Makes a cursor over an image. The bytes are not copied: a live
   * producer's image can be polled repeatedly. Throws
   * {@linkcode RuntimeEventsFormatError} if the metadata header is missing or
   * declares more than 4096 domains (as OCaml's create_cursor does).
   */
  constructor(image: Uint8Array | ArrayBuffer, options: CursorOptions = {}, path?: string) {
    this.#bytes = image instanceof Uint8Array ? image : new Uint8Array(image);
    this.#view = new DataView(this.#bytes.buffer, this.#bytes.byteOffset, this.#bytes.byteLength);
    this.path = path ?? null;
    if (this.#bytes.byteLength < METADATA_HEADER_SIZE) {
      throw new RuntimeEventsFormatError(
        `file is ${this.#bytes.byteLength} bytes, shorter than the ${METADATA_HEADER_SIZE}-byte metadata header`,
        null,
        0,
      );
    }
    this.metadata = readMetadataHeader(this.#view);
    if (this.metadata.maxDomains > BigInt(MAX_DOMAINS_MAX)) {
      throw new RuntimeEventsFormatError(
        `max_domains ${this.metadata.maxDomains} exceeds ${MAX_DOMAINS_MAX}`,
        null,
        8,
      );
    }
    this.#positions = new Float64Array(Number(this.metadata.maxDomains));
    this.#decoders = options.decoders;
  }

  /** Opens a `.events` file (read into memory once; see {@linkcode reload}). */
  static async open(path: string, options: CursorOptions = {}): Promise<RuntimeEventsCursor> {
    return new RuntimeEventsCursor(await Deno.readFile(path), options, path);
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

  /** Synchronous {@linkcode open}. */
  static openSync(path: string, options: CursorOptions = {}): RuntimeEventsCursor {
    return new RuntimeEventsCursor(Deno.readFileSync(path), options, path);
  }

  /**
   * Re-reads the file this cursor was opened from, keeping the read
   * positions, to follow a producer that is still writing. The metadata
   * header is not re-read.
   */
  async reload(): Promise<void> {
    if (this.path === null) throw new Error("runtime_events: cursor has no file to reload");
    this.#setBytes(await Deno.readFile(this.path));
  }

  #setBytes(bytes: Uint8Array): void {
    this.#bytes = bytes;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#names.clear();
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

  #u64(offset: number, domain: number | null, what: string): number {
    const v = this.#view;
    const hi = v.getUint32(offset + 4, true);
    if (hi > MAX_SAFE_HI) {
      throw new RuntimeEventsFormatError(`${what} is beyond 2^53`, domain, offset);
    }
    return hi * TWO32 + v.getUint32(offset, true);
  }

  #poll(cb: ConsumerCallbacks, maxEvents: number): number {
    const md = this.metadata;
    const size = this.#bytes.byteLength;
    const view = this.#view;
    const limit = BigInt(size);
    if (md.headersOffset > limit) {
      throw new RuntimeEventsFormatError(
        `headers_offset ${md.headersOffset} beyond end of file`,
        null,
        40,
      );
    }
    const elements = md.ringSizeElements;
    if (elements === 0n || elements * 8n !== md.ringSizeBytes || elements > 1n << 30n) {
      throw new RuntimeEventsFormatError(
        `ring_size_elements ${elements} does not match ring_size_bytes ${md.ringSizeBytes}`,
        null,
        32,
      );
    }
    if ((elements & (elements - 1n)) !== 0n) {
      throw new RuntimeEventsFormatError(
        `ring_size_elements ${elements} is not a power of two`,
        null,
        32,
      );
    }
    const ringWords = Number(elements);
    const maxDomains = Number(md.maxDomains);
    const startDomain = this.#nextReadDomain;
    const positions = this.#positions;
    let consumed = 0;

    for (let i = 0; i < maxDomains; i++) {
      const domain = (startDomain + i) % maxDomains;
      const hdrBig = md.headersOffset + BigInt(domain) * md.ringHeaderSizeBytes;
      if (hdrBig >= limit || hdrBig + md.ringHeaderSizeBytes > limit || hdrBig + 16n > limit) {
        throw new RuntimeEventsFormatError(
          `ring header beyond end of file (${size} bytes)`,
          domain,
          Number(hdrBig),
        );
      }
      const ringBig = md.dataOffset + BigInt(domain) * md.ringSizeBytes;
      if (md.dataOffset >= limit || ringBig >= limit || md.ringSizeBytes > limit - ringBig) {
        throw new RuntimeEventsFormatError(
          `ring data (${md.ringSizeBytes} bytes) beyond end of file (${size} bytes)`,
          domain,
          Number(ringBig),
        );
      }
      const hdr = Number(hdrBig);
      const ring = Number(ringBig);

      for (;;) {
        const head = this.#u64(hdr, domain, "ring head");
        const tail = this.#u64(hdr + 8, domain, "ring tail");
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
        const high = view.getUint32(at + 4, true);
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
        cb.message?.(domain, pos, length, isUser, type);
        if (!isUser) {
          this.#runtime(cb, domain, at, type, id, length);
        } else {
          this.#user(cb, domain, at, type, id, length);
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

  #runtime(
    cb: ConsumerCallbacks,
    domain: number,
    at: number,
    type: number,
    id: number,
    length: number,
  ): void {
    const view = this.#view;
    switch (type) {
      case RuntimeMessageType.EV_BEGIN:
        cb.runtimeBegin?.(domain, view.getBigInt64(at + 8, true), id);
        break;
      case RuntimeMessageType.EV_EXIT:
        cb.runtimeEnd?.(domain, view.getBigInt64(at + 8, true), id);
        break;
      case RuntimeMessageType.EV_COUNTER:
        if (length < 3) {
          throw new RuntimeEventsFormatError("counter message without a value", domain, at);
        }
        cb.runtimeCounter?.(
          domain,
          view.getBigInt64(at + 8, true),
          id,
          BigInt.asIntN(63, view.getBigUint64(at + 16, true)),
        );
        break;
      case RuntimeMessageType.EV_ALLOC: {
        if (length < 2 + NUM_ALLOC_BUCKETS) {
          throw new RuntimeEventsFormatError(
            `alloc message of ${length} words, needs ${2 + NUM_ALLOC_BUCKETS}`,
            domain,
            at,
          );
        }
        if (cb.alloc) {
          const buckets = new Array<bigint>(NUM_ALLOC_BUCKETS);
          for (let i = 0; i < NUM_ALLOC_BUCKETS; i++) {
            buckets[i] = BigInt.asIntN(63, view.getBigUint64(at + 16 + 8 * i, true));
          }
          cb.alloc(domain, view.getBigInt64(at + 8, true), buckets);
        }
        break;
      }
      case RuntimeMessageType.EV_LIFECYCLE:
        if (cb.lifecycle) {
          // EV_RING_STOP has no payload: OCaml reads it as 0, i.e. None.
          const raw = length > 2 ? view.getBigInt64(at + 16, true) : 0n;
          cb.lifecycle(
            domain,
            view.getBigInt64(at + 8, true),
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

  #user(
    cb: ConsumerCallbacks,
    domain: number,
    at: number,
    type: number,
    id: number,
    length: number,
  ): void {
    const event = this.#userEvent(domain, id, at);
    const view = this.#view;
    const ts = view.getBigInt64(at + 8, true);
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
        cb.userInt?.(domain, ts, event, BigInt.asIntN(63, view.getBigUint64(at + 16, true)));
        break;
      default: {
        // Type 4 and the unused 5..15 are custom, as in OCaml's switch.
        const words = length - 2;
        if (words === 0) {
          throw new RuntimeEventsFormatError("custom event without payload", domain, at);
        }
        const start = this.#bytes.byteOffset + at + 16;
        const last = words * 8 - 1;
        const padding = this.#bytes[at + 16 + last];
        // The last byte counts the unused bytes; OCaml reads it as a signed
        // char, so values of 128 and more (or larger than the payload) are garbage.
        if (padding >= 128 || padding > last) {
          throw new RuntimeEventsFormatError(
            `custom event padding byte ${padding} exceeds its ${last}-byte payload`,
            domain,
            at + 16 + last,
          );
        }
        const payload = new Uint8Array(this.#bytes.buffer, start, last - padding);
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
    const end = md.customEventsOffset + BigInt(id + 1) * BigInt(CUSTOM_EVENT_NAME_LENGTH);
    if (
      md.customEventsOffset > BigInt(this.#bytes.byteLength) || end > BigInt(this.#bytes.byteLength)
    ) {
      throw new RuntimeEventsFormatError(
        `name of user event ${id} lies beyond the end of the file`,
        domain,
        at,
      );
    }
    const off = Number(md.customEventsOffset) + id * CUSTOM_EVENT_NAME_LENGTH;
    const slot = this.#bytes.subarray(off, off + CUSTOM_EVENT_NAME_LENGTH);
    const nul = slot.indexOf(0);
    const nameBytes = slot.slice(0, nul < 0 ? CUSTOM_EVENT_NAME_LENGTH : nul);
    const info: UserEventInfo = { id, name: utf8.decode(nameBytes), nameBytes };
    this.#names.set(id, info);
    return info;
  }
}
