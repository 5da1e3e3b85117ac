/** Small assertion helpers over node:assert/strict for the runtime_events tests. */
import assert from "node:assert/strict";

/** Deep strict equality with an optional message. */
export function assertEquals<T>(actual: T, expected: T, message?: string): void {
  if (actual instanceof Uint8Array && expected instanceof Uint8Array) {
    assertBytesEqual(actual, expected, message);
    return;
  }
  assert.deepStrictEqual(actual, expected, message);
}

/** Byte equality that reports the first differing offset instead of dumping arrays. */
export function assertBytesEqual(actual: Uint8Array, expected: Uint8Array, message?: string): void {
  const prefix = message ? `${message}: ` : "";
  assert.equal(actual.byteLength, expected.byteLength, `${prefix}lengths differ`);
  for (let i = 0; i < actual.byteLength; i++) {
    if (actual[i] !== expected[i]) {
      assert.fail(`${prefix}bytes differ at offset ${i}: ${actual[i]} != ${expected[i]}`);
    }
  }
}

export { assert };
