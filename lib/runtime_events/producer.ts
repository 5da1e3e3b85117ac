/**
 * The runtime_events producer: a port of OCaml 5.3's `runtime/runtime_events.c`
 * writing into an in-memory image with the exact byte layout of a real
 * `<pid>.events` file.
 *
 * @module
 */

import { Lifecycle, NUM_ALLOC_BUCKETS, RuntimeMessageType, UserMessageType } from "./enums.ts";
import { OCamlInvalidArgument } from "../util/ocaml_exceptions.ts";
import { writeFileAtomic, writeFileAtomicSync } from "../util/atomic_file.ts";
import {
  computeLayout,
  CUSTOM_EVENT_NAME_LENGTH,
  DEFAULT_LOG_WSIZE,
  DEFAULT_MAX_DOMAINS,
  eventsFilePath,
  headerHigh,
  HOST_IS_LITTLE_ENDIAN,
  type Layout,
  MAX_CUSTOM_EVENTS,
  MAX_LOG_WSIZE,
  MIN_LOG_WSIZE,
  RING_HEADER_SIZE,
  writeMetadataHeader,
} from "./layout.ts";
import type {
  AnyUserType,
  CustomType,
  IntType,
  SpanType,
  SpanValue,
  UnitType,
  UserEvent,
} from "./user_types.ts";

/**
 * A clock giving nanoseconds. Numbers must be integers below 2^53; bigints
 * are stored modulo 2^64.
 */
export type Clock = () => number | bigint;

/**
 * The default clock: monotonic nanoseconds from `performance.now()` (since
 * process start, not since boot as OCaml's `caml_time_counter`).
 */
export const monotonicClock: Clock = (): number => Math.floor(performance.now() * 1e6);

/** Options of {@linkcode RuntimeEventsProducer}. */
export interface ProducerOptions {
  /** Number of domain slots (OCAMLRUNPARAM `d`); default 128 as in OCaml 5.3. */
  maxDomains?: number;
  /** log2 of each ring's size in 64-bit words (OCAMLRUNPARAM `e`); default 16. */
  logWsize?: number;
  /** Process id written by ring start, domain spawn/terminate and in the file name. */
  pid?: number;
  /** Timestamp source; default {@linkcode monotonicClock}. */
  clock?: Clock;
  /**
   * Keep the image (and any saved file) after {@linkcode RuntimeEventsProducer.destroy},
   * as OCAML_RUNTIME_EVENTS_PRESERVE does. Default false.
   */
  preserve?: boolean;
  /** Default directory for {@linkcode RuntimeEventsProducer.save} (OCAML_RUNTIME_EVENTS_DIR). */
  dir?: string;
  /**
   * Record EV_RING_PAUSE when pausing, as the C code seems to intend. Default
   * false: the real runtime sets the paused flag before writing the event, so
   * the event is never recorded.
   */
  recordPause?: boolean;
  /**
   * Store user int payloads as a C `int` (low 32 bits, sign-extended), as the
   * real runtime does (`Int_val`). Default true; false stores the whole value.
   */
  truncateUserInt?: boolean;
}

const TWO32 = 4294967296;
const WRITE_BUFFER_SIZE = 1024;
const encoder = new TextEncoder();

/** One domain's write buffer for custom events (OCaml keeps one per domain). */
interface WriteBuffer {
  bytes: Uint8Array;
  words: Uint32Array;
}

/**
 * Writes runtime and user events into per-domain flight-recorder rings laid
 * out exactly as OCaml 5.3's `<pid>.events` file.
 *
 * Methods take the writing domain's id first (OCaml uses `Caml_state->id`).
 * Like OCaml, every write is silently dropped while the producer is not
 * started, paused, or destroyed.
 *
 * @example Record a minor collection and a counter in a ring image
 * ```ts
 * import { RuntimeCounter, RuntimeEventsProducer, RuntimePhase } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const producer = new RuntimeEventsProducer({ maxDomains: 1, logWsize: 10, pid: 7 });
 * producer.start();
 * producer.begin(0, RuntimePhase.EV_MINOR);
 * producer.counter(0, RuntimeCounter.EV_C_MINOR_PROMOTED, 12);
 * producer.end(0, RuntimePhase.EV_MINOR);
 * assert.ok(producer.bytes.length > 0); // the `<pid>.events` file's bytes
 * ```
 */
export class RuntimeEventsProducer {
  /** Sizes and offsets of the image. */
  readonly layout: Layout;
  /** Process id used for ring start, domain spawn/terminate and the file name. */
  readonly pid: number;
  /** Whether the image survives {@linkcode destroy}. */
  readonly preserve: boolean;
  /** Whether pausing records EV_RING_PAUSE (false = real behaviour). */
  readonly recordPause: boolean;
  /** Whether user ints are truncated to 32 bits (true = real behaviour). */
  readonly truncateUserInt: boolean;

  #clock: Clock;
  #dir: string | undefined;
  #buffer: ArrayBuffer | null = null;
  #u32: Uint32Array = new Uint32Array(0);
  #u64: BigUint64Array = new BigUint64Array(0);
  #enabled = false;
  #paused = false;
  // Mirrors of each ring's head and tail (absolute word positions) and of
  // their physical offsets, so the write path never reads back u64s.
  #heads: Float64Array;
  #tails: Float64Array;
  #headOffs: Int32Array;
  #tailOffs: Int32Array;
  #ringWords: number;
  #mask: number;
  #allocBuckets = new Float64Array(NUM_ALLOC_BUCKETS);
  #userEvents: UserEvent<unknown>[] = [];
  #nextUserIndex = 0;
  #writeBuffers: (WriteBuffer | undefined)[];
  #savedPath: string | null = null;

  /** Makes a producer; nothing is recorded until {@linkcode start}. */
  constructor(options: ProducerOptions = {}) {
    if (!HOST_IS_LITTLE_ENDIAN) {
      throw new Error("runtime_events producer needs a little-endian host");
    }
    const maxDomains = options.maxDomains ?? DEFAULT_MAX_DOMAINS;
    const logWsize = options.logWsize ?? DEFAULT_LOG_WSIZE;
    if (!Number.isInteger(maxDomains) || maxDomains < 1 || maxDomains > 4096) {
      throw new RangeError(`maxDomains must be an integer in 1..4096, got ${maxDomains}`);
    }
    if (!Number.isInteger(logWsize) || logWsize < MIN_LOG_WSIZE || logWsize > MAX_LOG_WSIZE) {
      throw new RangeError(
        `logWsize must be an integer in ${MIN_LOG_WSIZE}..${MAX_LOG_WSIZE}, got ${logWsize}`,
      );
    }
    this.layout = computeLayout(maxDomains, logWsize);
    this.pid = options.pid ?? Deno.pid;
    this.preserve = options.preserve ?? false;
    this.recordPause = options.recordPause ?? false;
    this.truncateUserInt = options.truncateUserInt ?? true;
    this.#clock = options.clock ?? monotonicClock;
    this.#dir = options.dir;
    this.#heads = new Float64Array(maxDomains);
    this.#tails = new Float64Array(maxDomains);
    this.#headOffs = new Int32Array(maxDomains);
    this.#tailOffs = new Int32Array(maxDomains);
    this.#ringWords = this.layout.ringSizeElements;
    this.#mask = this.#ringWords - 1;
    this.#writeBuffers = new Array(maxDomains);
  }

  /** True between {@linkcode start} and {@linkcode destroy}. */
  get started(): boolean {
    return this.#enabled;
  }

  /** True when events are being recorded (started and not paused). */
  get active(): boolean {
    return this.#enabled && !this.#paused;
  }

  /** The image's bytes (the whole file). Throws if there is none. */
  get bytes(): Uint8Array {
    if (this.#buffer === null) {
      throw new Error(
        "runtime_events: no image (not started, or destroyed without the preserve option)",
      );
    }
    return new Uint8Array(this.#buffer);
  }

  /** File name OCaml would use: `<pid>.events`. */
  get fileName(): string {
    return `${this.pid}.events`;
  }

  /** Absolute head position (in words) of `domain`'s ring. */
  ringHead(domain: number): number {
    return this.#heads[domain];
  }

  /** Absolute tail position (in words) of `domain`'s ring. */
  ringTail(domain: number): number {
    return this.#tails[domain];
  }

  /**
   * Creates the image and records EV_RING_START (with the pid) on `domain`'s
   * ring, then writes the names of user events registered so far. Does
   * nothing if already started. After a preserved destroy the old image is
   * reused, as OCaml reopens the existing file without truncating it.
   */
  start(domain = 0): void {
    if (this.#enabled) return;
    this.#checkDomain(domain);
    const layout = this.layout;
    if (this.#buffer === null) {
      this.#buffer = new ArrayBuffer(layout.totalSize);
      this.#u32 = new Uint32Array(this.#buffer);
      this.#u64 = new BigUint64Array(this.#buffer);
    }
    writeMetadataHeader(new DataView(this.#buffer), layout);
    const h0 = layout.headersOffset >> 2;
    for (let d = 0; d < layout.maxDomains; d++) {
      const h = h0 + d * (RING_HEADER_SIZE >> 2);
      this.#u32.fill(0, h, h + 4);
      this.#heads[d] = 0;
      this.#tails[d] = 0;
      this.#headOffs[d] = 0;
      this.#tailOffs[d] = 0;
    }
    this.#enabled = true;
    this.#paused = false;
    this.lifecycle(domain, Lifecycle.EV_RING_START, this.pid);
    for (const ev of this.#userEvents) this.#writeName(ev.index, ev.nameBytes);
  }

  /**
   * Pauses recording. Emits nothing by default: OCaml sets the paused flag
   * before writing EV_RING_PAUSE, so the write is dropped (see `recordPause`).
   * Only the first of repeated pauses has any effect.
   */
  pause(domain = 0): void {
    if (!this.#enabled || this.#paused) return;
    this.#checkDomain(domain);
    if (this.recordPause) this.lifecycle(domain, Lifecycle.EV_RING_PAUSE, 0);
    this.#paused = true;
  }

  /** Resumes recording and records EV_RING_RESUME, once per pause. */
  resume(domain = 0): void {
    if (!this.#enabled || !this.#paused) return;
    this.#checkDomain(domain);
    this.#paused = false;
    this.lifecycle(domain, Lifecycle.EV_RING_RESUME, 0);
  }

  /**
   * Records EV_RING_STOP (no payload; written even while paused, as OCaml
   * does) and stops. Without `preserve` the image is dropped and a file
   * written by {@linkcode save} is removed.
   *
   * OCaml tears the rings down inside a stop-the-world section, so a real
   * file usually ends with `ring_stop` followed by `begin stw_leader`;
   * `beforeTeardown` runs between the two steps, while events are still
   * recorded, to let a simulated runtime write such events.
   */
  destroy(domain = 0, beforeTeardown?: () => void): void {
    if (!this.#enabled) return;
    const high = headerHigh(2, false, RuntimeMessageType.EV_LIFECYCLE, Lifecycle.EV_RING_STOP);
    this.#reserve(domain, high, 2);
    beforeTeardown?.();
    if (!this.#enabled) return; // the hook destroyed it already
    this.#enabled = false;
    if (!this.preserve) {
      this.#buffer = null;
      this.#u32 = new Uint32Array(0);
      this.#u64 = new BigUint64Array(0);
      if (this.#savedPath !== null) {
        try {
          Deno.removeSync(this.#savedPath);
        } catch (e) {
          if (!(e instanceof Deno.errors.NotFound)) throw e;
        }
        this.#savedPath = null;
      }
    }
  }

  /** Records the start of a runtime phase (`caml_ev_begin`). */
  begin(domain: number, phase: number): void {
    if (!this.#enabled || this.#paused) return;
    this.#reserve(domain, headerHigh(2, false, RuntimeMessageType.EV_BEGIN, phase), 2);
  }

  /** Records the end of a runtime phase (`caml_ev_end`). */
  end(domain: number, phase: number): void {
    if (!this.#enabled || this.#paused) return;
    this.#reserve(domain, headerHigh(2, false, RuntimeMessageType.EV_EXIT, phase), 2);
  }

  /**
   * Same as {@linkcode begin}; with {@linkcode endPhase}, `counter` and
   * `lifecycle` this makes the producer usable wherever the simulated
   * runtime expects its events sink (`lib/runtime`'s `RuntimeEventsSink`).
   */
  beginPhase(domain: number, phase: number): void {
    this.begin(domain, phase);
  }

  /** Same as {@linkcode end}. */
  endPhase(domain: number, phase: number): void {
    this.end(domain, phase);
  }

  /** Records a counter value, a u64 (`caml_ev_counter`). */
  counter(domain: number, counter: number, value: number | bigint): void {
    if (!this.#enabled || this.#paused) return;
    const p = this.#reserve(
      domain,
      headerHigh(3, false, RuntimeMessageType.EV_COUNTER, counter),
      3,
    );
    this.#put64(p, value);
  }

  /** Records a lifecycle event with its int64 payload (`caml_ev_lifecycle`). */
  lifecycle(domain: number, event: number, data: number | bigint = 0): void {
    if (!this.#enabled || this.#paused) return;
    const p = this.#reserve(
      domain,
      headerHigh(3, false, RuntimeMessageType.EV_LIFECYCLE, event),
      3,
    );
    this.#put64(p, data);
  }

  /** Records EV_DOMAIN_SPAWN with the pid, on the new domain's ring. */
  domainSpawn(domain: number): void {
    this.lifecycle(domain, Lifecycle.EV_DOMAIN_SPAWN, this.pid);
  }

  /** Records EV_DOMAIN_TERMINATE with the pid, on the terminating domain's ring. */
  domainTerminate(domain: number): void {
    this.lifecycle(domain, Lifecycle.EV_DOMAIN_TERMINATE, this.pid);
  }

  /**
   * Counts a major-heap allocation of `words` words in the shared buckets
   * (`caml_ev_alloc`): sizes 0–9 have their own bucket, 10–99 one per ten,
   * larger ones share the last.
   */
  alloc(words: number): void {
    if (!this.#enabled || this.#paused) return;
    const b = this.#allocBuckets;
    // OCaml's size is unsigned: anything not in 0..99 goes to the last bucket.
    if (words >= 0 && words < 10) b[Math.floor(words)]++;
    else if (words >= 10 && words < 100) b[Math.floor(words / 10) + 9]++;
    else b[NUM_ALLOC_BUCKETS - 1]++;
  }

  /**
   * Writes the alloc buckets as one EV_ALLOC message and resets them
   * (`caml_ev_alloc_flush`). As in OCaml, bucket 0 is never reset.
   */
  allocFlush(domain: number): void {
    if (!this.#enabled || this.#paused) return;
    const n = NUM_ALLOC_BUCKETS;
    const p = this.#reserve(
      domain,
      headerHigh(n + 2, false, RuntimeMessageType.EV_ALLOC, 0),
      n + 2,
    );
    const b = this.#allocBuckets;
    for (let i = 0; i < n; i++) this.#put64(p + 2 * i, b[i]);
    b.fill(0, 1);
  }

  /** Registers a unit user event. See the generic overload. */
  registerUserEvent(name: string, type: UnitType, tag?: unknown): UserEvent<void>;
  /** Registers an int user event. See the generic overload. */
  registerUserEvent(name: string, type: IntType, tag?: unknown): UserEvent<number | bigint>;
  /** Registers a span user event. See the generic overload. */
  registerUserEvent(name: string, type: SpanType, tag?: unknown): UserEvent<SpanValue>;
  /**
   * Registers a user event (`Runtime_events.User.register`) and writes its
   * name in the custom event table (now if started, else at start). Like
   * OCaml, the index is taken before the checks, so a failed registration
   * still uses one. Throws {@linkcode OCamlInvalidArgument} with OCaml's
   * messages.
   */
  registerUserEvent<T>(name: string, type: CustomType<T>, tag?: unknown): UserEvent<T>;
  /** Registers a user event of a type known only at run time. */
  registerUserEvent(name: string, type: AnyUserType, tag?: unknown): UserEvent<unknown>;
  registerUserEvent(
    name: string,
    type: AnyUserType,
    tag?: unknown,
  ): UserEvent<unknown> {
    const index = this.#nextUserIndex++;
    // OCaml tests `index > RUNTIME_EVENTS_MAX_CUSTOM_EVENTS`, which lets index
    // 8192 through and writes past the table; we stop at the real limit.
    if (index >= MAX_CUSTOM_EVENTS) {
      throw new OCamlInvalidArgument(
        "Runtime_events.User.register: maximum number of custom events exceeded",
      );
    }
    const nameBytes = encoder.encode(name);
    if (nameBytes.length > CUSTOM_EVENT_NAME_LENGTH - 1) {
      throw new OCamlInvalidArgument(
        "Runtime_events.User.register: maximum length for event name exceeded",
      );
    }
    if (nameBytes.includes(0)) {
      throw new OCamlInvalidArgument(
        "Runtime_events.User.register: event name has null characters",
      );
    }
    const event: UserEvent<unknown> = { index, name, nameBytes, type, tag };
    if (this.#enabled) this.#writeName(index, nameBytes);
    this.#userEvents.push(event);
    return event;
  }

  /** Writes a unit user event. */
  writeUser(domain: number, event: UserEvent<void>): void;
  /**
   * Writes a user event (`Runtime_events.User.write`). Int values are stored
   * as a C int (see `truncateUserInt`); custom values go through the type's
   * serializer into this domain's reused 1,024-byte buffer, whose last used
   * byte records the padding, exactly as OCaml lays it out.
   */
  writeUser<T>(domain: number, event: UserEvent<T>, value: T): void;
  writeUser(domain: number, event: UserEvent<unknown>, value?: unknown): void {
    if (!this.#enabled || this.#paused) return;
    const type = event.type;
    const id = event.index;
    switch (type.kind) {
      case "unit":
        this.#reserve(domain, headerHigh(2, true, UserMessageType.EV_USER_MSG_TYPE_UNIT, id), 2);
        return;
      case "int":
        this.writeUserInt(domain, event as UserEvent<number | bigint>, value as number | bigint);
        return;
      case "span": {
        const t = value === "begin"
          ? UserMessageType.EV_USER_MSG_TYPE_SPAN_BEGIN
          : UserMessageType.EV_USER_MSG_TYPE_SPAN_END;
        this.#reserve(domain, headerHigh(2, true, t, id), 2);
        return;
      }
      case "custom":
        this.#writeCustom(domain, id, type, value);
        return;
    }
  }

  /** Fast path of {@linkcode writeUser} for int events. */
  writeUserInt(domain: number, event: UserEvent<number | bigint>, value: number | bigint): void {
    if (!this.#enabled || this.#paused) return;
    const high = headerHigh(3, true, UserMessageType.EV_USER_MSG_TYPE_INT, event.index);
    if (typeof value === "number") {
      if (!Number.isInteger(value)) {
        throw new TypeError(`user int event value must be an integer, got ${value}`);
      }
      const p = this.#reserve(domain, high, 3);
      if (this.truncateUserInt) {
        const v = value | 0;
        this.#u32[p] = v;
        this.#u32[p + 1] = v >> 31;
      } else {
        this.#put64(p, value);
      }
    } else {
      const p = this.#reserve(domain, high, 3);
      // Typed-array stores wrap bigints modulo 2^64.
      this.#u64[p >> 1] = this.truncateUserInt ? BigInt.asIntN(32, value) : value;
    }
  }

  /**
   * Saves the image as `<dir>/<pid>.events` (written to a temporary beside it, then renamed;
   * when either throws, the temporary is removed) and returns the path. `dir` defaults to the
   * `dir` option, then ".".
   */
  async save(dir?: string): Promise<string> {
    const path = this.#savePath(dir);
    await writeFileAtomic(path, this.bytes);
    this.#savedPath = path;
    return path;
  }

  /** Synchronous {@linkcode save}. */
  saveSync(dir?: string): string {
    const path = this.#savePath(dir);
    writeFileAtomicSync(path, this.bytes);
    this.#savedPath = path;
    return path;
  }

  #savePath(dir: string | undefined): string {
    return eventsFilePath(dir ?? this.#dir ?? ".", this.pid);
  }

  #writeCustom(domain: number, id: number, type: CustomType<unknown>, value: unknown): void {
    this.#checkDomain(domain);
    let wb = this.#writeBuffers[domain];
    if (wb === undefined) {
      const bytes = new Uint8Array(WRITE_BUFFER_SIZE);
      wb = { bytes, words: new Uint32Array(bytes.buffer) };
      this.#writeBuffers[domain] = wb;
    }
    const len = type.codec.serialize(wb.bytes, value);
    if (!Number.isInteger(len) || len < 0 || len > WRITE_BUFFER_SIZE - 1) {
      throw new RangeError(
        `custom event serializer must return a length in 0..${WRITE_BUFFER_SIZE - 1}, got ${len}`,
      );
    }
    // The serializer may have paused or destroyed the ring (OCaml re-checks too).
    if (!this.#enabled || this.#paused) return;
    const words = Math.floor((len + 8) / 8);
    const last = words * 8 - 1;
    wb.bytes[last] = last - len;
    const high = headerHigh(words + 2, true, UserMessageType.EV_USER_MSG_TYPE_CUSTOM, id);
    const p = this.#reserve(domain, high, words + 2);
    const u32 = this.#u32;
    const src = wb.words;
    for (let i = 0; i < 2 * words; i++) u32[p + i] = src[i];
  }

  #writeName(index: number, nameBytes: Uint8Array): void {
    // strncpy(name, src, 127): copy, then NUL-fill up to 127 bytes.
    const at = this.layout.customEventsOffset + index * CUSTOM_EVENT_NAME_LENGTH;
    const slot = new Uint8Array(this.#buffer!, at, CUSTOM_EVENT_NAME_LENGTH - 1);
    slot.fill(0);
    slot.set(nameBytes);
  }

  #checkDomain(domain: number): void {
    if (!(domain >= 0 && domain < this.layout.maxDomains && (domain | 0) === domain)) {
      throw new RangeError(
        `domain ${domain} out of range (maxDomains is ${this.layout.maxDomains})`,
      );
    }
  }

  /** Stores a u64 at u32 index `p` from a number (two's complement) or bigint. */
  #put64(p: number, v: number | bigint): void {
    if (typeof v === "number") {
      this.#u32[p] = v >>> 0;
      this.#u32[p + 1] = Math.floor(v / TWO32) >>> 0;
    } else {
      this.#u64[p >> 1] = v;
    }
  }

  /**
   * `write_to_ring` without the payload copy: makes room for a `len`-word
   * message (padding to the ring end and advancing the head as needed),
   * writes its header and timestamp, publishes the new tail and returns the
   * u32 index of the payload.
   */
  #reserve(domain: number, high: number, len: number): number {
    this.#checkDomain(domain);
    const u32 = this.#u32;
    const size = this.#ringWords;
    const mask = this.#mask;
    const layout = this.layout;
    const hdr = (layout.headersOffset + domain * RING_HEADER_SIZE) >> 2;
    const base = (layout.dataOffset + domain * layout.ringSizeBytes) >> 2;
    let tail = this.#tails[domain];
    let off = this.#tailOffs[domain];
    const ts = this.#clock();
    const toEnd = size - off;
    const pad = toEnd < len ? toEnd : 0;
    let head = this.#heads[domain];
    if (tail + len + pad - head >= size) {
      // Flight recorder: drop the oldest messages until the new one fits.
      let hoff = this.#headOffs[domain];
      do {
        const l = (u32[base + 2 * hoff + 1] >>> 22) & 0x3ff;
        if (l === 0 || head >= tail) throw new Error("runtime_events: ring state corrupted");
        head += l;
        hoff = (hoff + l) & mask;
      } while (tail + len + pad - head >= size);
      this.#heads[domain] = head;
      this.#headOffs[domain] = hoff;
      u32[hdr] = head >>> 0;
      u32[hdr + 1] = (head / TWO32) >>> 0;
    }
    if (pad > 0) {
      // Padding message: type EV_INTERNAL, id 0; readers skip to the ring start.
      u32[base + 2 * off] = 0;
      u32[base + 2 * off + 1] = (pad << 22) >>> 0;
      tail += pad;
      off = 0;
    }
    const i = base + 2 * off;
    u32[i] = 0;
    u32[i + 1] = high;
    if (typeof ts === "number") {
      u32[i + 2] = ts >>> 0;
      u32[i + 3] = Math.floor(ts / TWO32) >>> 0;
    } else {
      this.#u64[(i + 2) >> 1] = ts;
    }
    tail += len;
    this.#tails[domain] = tail;
    this.#tailOffs[domain] = (off + len) & mask;
    u32[hdr + 2] = tail >>> 0;
    u32[hdr + 3] = (tail / TWO32) >>> 0;
    return i + 4;
  }
}
