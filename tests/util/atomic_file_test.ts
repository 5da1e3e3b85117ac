// lib/util/atomic_file.ts: the one whole-file writer (temporary beside the file, then rename).
import assert from "node:assert/strict";
import {
  discardTemporary,
  liveTemporaries,
  openTemporary,
  temporaryOf,
  writeFileAtomic,
  writeFileAtomicSync,
} from "../../lib/util/atomic_file.ts";

const names = (dir: string) => [...Deno.readDirSync(dir)].map((e) => e.name).sort();

Deno.test("writeFileAtomic(Sync) writes the file whole and leaves nothing beside it", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const path = `${dir}/out.bin`;
    assert.equal(temporaryOf(path), `${path}.${Deno.pid}.tmp`);
    writeFileAtomicSync(path, new Uint8Array([1, 2, 3]));
    assert.deepEqual(Deno.readFileSync(path), new Uint8Array([1, 2, 3]));
    await writeFileAtomic(path, new Uint8Array([4, 5]));
    assert.deepEqual(Deno.readFileSync(path), new Uint8Array([4, 5]));
    assert.deepEqual(names(dir), ["out.bin"]);
    assert.deepEqual(liveTemporaries(), []);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a write whose rename throws removes its temporary; the old content stays", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const path = `${dir}/busy`;
    Deno.mkdirSync(`${path}/inside`, { recursive: true }); // a folder that is not empty
    assert.throws(() => writeFileAtomicSync(path, new Uint8Array([1])));
    await assert.rejects(() => writeFileAtomic(path, new Uint8Array([1])));
    assert.deepEqual(names(dir), ["busy"]);
    assert.deepEqual(names(path), ["inside"]);
    assert.deepEqual(liveTemporaries(), []);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a second write of a path while one is under way is refused, not interleaved", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const path = `${dir}/f`;
    const out = openTemporary(path);
    try {
      assert.deepEqual(liveTemporaries(), [temporaryOf(path)]);
      assert.throws(() => writeFileAtomicSync(path, new Uint8Array([1])), Deno.errors.Busy);
    } finally {
      discardTemporary(out);
    }
    assert.deepEqual(liveTemporaries(), []);
    assert.deepEqual(names(dir), []);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
