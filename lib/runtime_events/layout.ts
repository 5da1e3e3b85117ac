/**
 * Byte layout of an OCaml 5.3 `<pid>.events` ring file and of its header
 * words.
 *
 * ```
 * 0                      metadata header: eight u64 (64 bytes)
 * headers_offset (64)    max_domains ring headers of 80 bytes (head, tail, 8 pad words)
 * data_offset            max_domains rings of ring_size_bytes each
 * custom_events_offset   8192 custom event names of 128 bytes each
 * ```
 *
 * All integers are little-endian u64 (the files come from amd64; the
 * producer asserts a little-endian host because it writes through typed arrays).
 *
 * @module
 */

/** Format version written in the metadata header. */
export const RUNTIME_EVENTS_VERSION = 1;
/** Size of the metadata header in bytes (eight u64 fields). */
export const METADATA_HEADER_SIZE = 64;
/** Size of one ring header in bytes: head, tail and 8 padding words. */
export const RING_HEADER_SIZE = 80;
/** Bytes reserved per custom (user) event name, NUL included. */
export const CUSTOM_EVENT_NAME_LENGTH = 128;
/** Number of custom event name slots at the end of the file. */
export const MAX_CUSTOM_EVENTS = 1 << 13;
/** Upper bound on a message length in words (the header field has 10 bits). */
export const MAX_MSG_LENGTH = 1 << 10;
/** Default log2 of the ring size in words (OCAMLRUNPARAM `e`). */
export const DEFAULT_LOG_WSIZE = 16;
/** Default number of domain slots (OCAMLRUNPARAM `d`) in OCaml 5.3. */
export const DEFAULT_MAX_DOMAINS = 128;
/**
 * Smallest ring we accept: the largest message we can write (a custom event,
 * 130 words) plus the worst padding must fit, or the head would overtake the tail.
 */
export const MIN_LOG_WSIZE = 9;
/** Largest ring we accept (2^30 words = 8 GiB per domain, far beyond memory). */
export const MAX_LOG_WSIZE = 30;
/** Byte offsets of the metadata header fields. */
export const MetadataField = {
  version: 0,
  maxDomains: 8,
  ringHeaderSizeBytes: 16,
  ringSizeBytes: 24,
  ringSizeElements: 32,
  headersOffset: 40,
  dataOffset: 48,
  customEventsOffset: 56,
} as const;

/** Decoded metadata header of a ring file. All values are exact u64s. */
export interface MetadataHeader {
  /** Format version (1). */
  version: bigint;
  /** Number of ring slots. */
  maxDomains: bigint;
  /** Size of one ring header in bytes (80). */
  ringHeaderSizeBytes: bigint;
  /** Size of one ring's data in bytes. */
  ringSizeBytes: bigint;
  /** Size of one ring in 64-bit words. */
  ringSizeElements: bigint;
  /** Byte offset of the first ring header (64). */
  headersOffset: bigint;
  /** Byte offset of the first ring's data. */
  dataOffset: bigint;
  /** Byte offset of the custom event name table. */
  customEventsOffset: bigint;
}

/** Sizes and offsets of a well-formed image, as plain numbers. */
export interface Layout {
  /** Number of ring slots. */
  maxDomains: number;
  /** log2 of the ring size in words. */
  logWsize: number;
  /** Ring size in 64-bit words. */
  ringSizeElements: number;
  /** Ring size in bytes. */
  ringSizeBytes: number;
  /** Byte offset of the first ring header. */
  headersOffset: number;
  /** Byte offset of the first ring's data. */
  dataOffset: number;
  /** Byte offset of the custom event name table. */
  customEventsOffset: number;
  /** Size of the whole file in bytes. */
  totalSize: number;
}

/** Computes the layout OCaml uses for `maxDomains` rings of `2^logWsize` words. */
export function computeLayout(maxDomains: number, logWsize: number): Layout {
  const ringSizeElements = 2 ** logWsize;
  const ringSizeBytes = ringSizeElements * 8;
  const headersOffset = METADATA_HEADER_SIZE;
  const dataOffset = headersOffset + RING_HEADER_SIZE * maxDomains;
  const customEventsOffset = dataOffset + maxDomains * ringSizeBytes;
  const totalSize = customEventsOffset + MAX_CUSTOM_EVENTS * CUSTOM_EVENT_NAME_LENGTH;
  return {
    maxDomains,
    logWsize,
    ringSizeElements,
    ringSizeBytes,
    headersOffset,
    dataOffset,
    customEventsOffset,
    totalSize,
  };
}

/** Reads the eight u64 fields of the metadata header (the image must hold 64 bytes). */
export function readMetadataHeader(view: DataView): MetadataHeader {
  const g = (o: number) => view.getBigUint64(o, true);
  return {
    version: g(MetadataField.version),
    maxDomains: g(MetadataField.maxDomains),
    ringHeaderSizeBytes: g(MetadataField.ringHeaderSizeBytes),
    ringSizeBytes: g(MetadataField.ringSizeBytes),
    ringSizeElements: g(MetadataField.ringSizeElements),
    headersOffset: g(MetadataField.headersOffset),
    dataOffset: g(MetadataField.dataOffset),
    customEventsOffset: g(MetadataField.customEventsOffset),
  };
}

/** Writes the metadata header for `layout` (what `runtime_events_create_raw` does). */
export function writeMetadataHeader(view: DataView, layout: Layout): void {
  const s = (o: number, v: number) => view.setBigUint64(o, BigInt(v), true);
  s(MetadataField.version, RUNTIME_EVENTS_VERSION);
  s(MetadataField.maxDomains, layout.maxDomains);
  s(MetadataField.ringHeaderSizeBytes, RING_HEADER_SIZE);
  s(MetadataField.ringSizeBytes, layout.ringSizeBytes);
  s(MetadataField.ringSizeElements, layout.ringSizeElements);
  s(MetadataField.headersOffset, layout.headersOffset);
  s(MetadataField.dataOffset, layout.dataOffset);
  s(MetadataField.customEventsOffset, layout.customEventsOffset);
}

/** Fields of an event header word. */
export interface EventHeader {
  /** Message length in words, counting the header and timestamp words. */
  length: number;
  /** True for user events (bit 53). */
  isUser: boolean;
  /** Message type (4 bits): a RuntimeMessageType or a UserMessageType. */
  type: number;
  /** Event id (13 bits): phase, counter, lifecycle or user event index. */
  id: number;
}

/**
 * Upper 32 bits of a header word. OCaml packs
 * `length << 54 | is_user << 53 | type << 49 | id << 36`, so the low 32 bits
 * are always zero and the producer only needs this half.
 */
export function headerHigh(length: number, isUser: boolean, type: number, id: number): number {
  return ((length << 22) | (isUser ? 1 << 21 : 0) | (type << 17) | (id << 4)) >>> 0;
}

/** Packs a full header word as OCaml's RUNTIME_EVENTS_HEADER does. */
export function packHeader(length: number, isUser: boolean, type: number, id: number): bigint {
  return (BigInt(length & 0x3ff) << 54n) | (isUser ? 1n << 53n : 0n) |
    (BigInt(type & 0xf) << 49n) | (BigInt(id & 0x1fff) << 36n);
}

/** Unpacks a header word given its upper 32 bits (the only ones OCaml reads). */
export function unpackHeaderHigh(high: number): EventHeader {
  return {
    length: (high >>> 22) & 0x3ff,
    isUser: ((high >>> 21) & 1) === 1,
    type: (high >>> 17) & 0xf,
    id: (high >>> 4) & 0x1fff,
  };
}

/** Unpacks a full 64-bit header word. */
export function unpackHeader(word: bigint): EventHeader {
  return unpackHeaderHigh(Number((word >> 32n) & 0xffffffffn));
}

/** True when typed arrays on this host are little-endian, as the file format is. */
export const HOST_IS_LITTLE_ENDIAN: boolean = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Path of the ring file of process `pid` in `dir`: `<dir>/<pid>.events`, as OCaml names it. */
export function eventsFilePath(dir: string, pid: number): string {
  const d = dir.replace(/\/+$/, "");
  return `${d === "" && dir.startsWith("/") ? "" : d === "" ? "." : d}/${pid}.events`;
}
