/**
 * User event types and registered user events, mirroring
 * `Runtime_events.Type` and `Runtime_events.User`.
 *
 * @module
 */

/** How a custom event value is written into (and read back from) its bytes. */
export interface CustomCodec<T> {
  /**
   * Writes `value` into `buf` (1,024 bytes, reused between calls, so it may
   * hold bytes from an earlier event) and returns the number of bytes used,
   * at most 1,023.
   */
  serialize(buf: Uint8Array, value: T): number;
  /** Reads a value back from the first `len` bytes of `buf` (optional). */
  deserialize?(buf: Uint8Array, len: number): T;
}

/** The built-in unit type (`Runtime_events.Type.unit`). */
export interface UnitType {
  /** Discriminant. */
  readonly kind: "unit";
  /** OCaml's type id. */
  readonly id: 0;
}
/** The built-in int type (`Runtime_events.Type.int`). */
export interface IntType {
  /** Discriminant. */
  readonly kind: "int";
  /** OCaml's type id. */
  readonly id: 1;
}
/** The built-in span type (`Runtime_events.Type.span`). */
export interface SpanType {
  /** Discriminant. */
  readonly kind: "span";
  /** OCaml's type id. */
  readonly id: 2;
}
/** A custom type made by {@linkcode customType}. */
export interface CustomType<T> {
  /** Discriminant. */
  readonly kind: "custom";
  /** Type id as OCaml numbers custom types: 3, 4, … in creation order. */
  readonly id: number;
  /** How values are written to and read from bytes. */
  readonly codec: CustomCodec<T>;
}

/** Any user event type. */
export type AnyUserType = UnitType | IntType | SpanType | CustomType<unknown>;

/** Span boundaries written by span user events. */
export type SpanValue = "begin" | "end";

/** The built-in user event types. */
export const Type = {
  unit: { kind: "unit", id: 0 } as UnitType,
  int: { kind: "int", id: 1 } as IntType,
  span: { kind: "span", id: 2 } as SpanType,
} as const;

// OCaml's Type.register numbers custom types from 3 with a global counter.
let nextCustomTypeId = 3;

/** Makes a custom user event type (`Runtime_events.Type.register`). */
export function customType<T>(codec: CustomCodec<T>): CustomType<T> {
  return { kind: "custom", id: nextCustomTypeId++, codec };
}

/** A registered user event (`Runtime_events.User.t`). */
export interface UserEvent<T> {
  /** Index in the custom event name table; also the id in header words. */
  readonly index: number;
  /** Event name (at most 127 UTF-8 bytes, no NUL). */
  readonly name: string;
  /** UTF-8 bytes of the name. */
  readonly nameBytes: Uint8Array;
  /** The event's type, which fixes how values are written. */
  readonly type: UnitType | IntType | SpanType | CustomType<T>;
  /** Caller-supplied tag (OCaml's extensible `tag`), if any. */
  readonly tag: unknown;
}

/**
 * A custom type whose values are raw bytes (at most 1,023), written as is.
 * Handy for replaying payloads or for scenarios that give bytes directly.
 */
export function bytesType(): CustomType<Uint8Array | readonly number[]> {
  return customType({
    serialize: (buf, value) => {
      if (value.length > buf.length - 1) {
        throw new RangeError(`custom event payload of ${value.length} bytes exceeds 1023`);
      }
      buf.set(value);
      return value.length;
    },
    deserialize: (buf, len) => buf.slice(0, len),
  });
}
