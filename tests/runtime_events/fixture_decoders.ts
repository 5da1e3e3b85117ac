/**
 * Decoder for the `ref.custom` events of the runtime_events fixtures:
 * payload = 1-byte label length, label bytes, int64 LE, float64 LE, printed
 * as the reference program does: `{label=%S; n=%d; x=%h}`.
 *
 * Also usable from the CLI:
 * `deno task events dump FILE --decoders tests/runtime_events/fixture_decoders.ts`.
 *
 * @module
 */
import type { CustomEventDecoder } from "../../lib/runtime_events/mod.ts";
import { ocamlHexFloat, ocamlQuote } from "../../lib/util/ocaml_printf.ts";

/** A decoded `ref.custom` value. */
export interface RefCustom {
  label: Uint8Array;
  n: bigint;
  x: number;
}

/** Decoder and printer of `ref.custom` payloads. */
export const refCustomDecoder: CustomEventDecoder<RefCustom> = {
  decode(payload: Uint8Array): RefCustom {
    const len = payload[0];
    if (payload.length !== 1 + len + 16) {
      throw new RangeError(`ref.custom payload of ${payload.length} bytes, expected ${17 + len}`);
    }
    const view = new DataView(payload.buffer, payload.byteOffset + 1 + len, 16);
    return {
      label: payload.slice(1, 1 + len),
      n: view.getBigInt64(0, true),
      x: view.getFloat64(8, true),
    };
  },
  format: (v) => `{label=${ocamlQuote(v.label)}; n=${v.n}; x=${ocamlHexFloat(v.x)}}`,
};

/** Encodes a `ref.custom` value (for producer round trips). */
export function encodeRefCustom(
  buf: Uint8Array,
  v: { label: string; n: bigint; x: number },
): number {
  const label = new TextEncoder().encode(v.label);
  buf[0] = label.length;
  buf.set(label, 1);
  const view = new DataView(buf.buffer, buf.byteOffset + 1 + label.length, 16);
  view.setBigInt64(0, v.n, true);
  view.setFloat64(8, v.x, true);
  return 1 + label.length + 16;
}

/** Default export for `--decoders`: decoders by event name. */
export default { "ref.custom": refCustomDecoder };
