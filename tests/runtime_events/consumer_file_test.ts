// The consumer on hostile files (issue 11): header fields named with their real offsets and
// exact values, files read ring by ring (never whole), pipes and devices read within a bound,
// and statistics over a very long ring.
import { assert, assertEquals } from "./assert.ts";
import {
  computeStats,
  DecoderRegistry,
  dumpImage,
  RingFileSource,
  type RingSource,
  RuntimeEventsCursor,
  RuntimeEventsFormatError,
  RuntimeEventsLimitError,
  RuntimeEventsProducer,
  RuntimePhase,
  Type,
} from "../../lib/runtime_events/mod.ts";
import { dumpCallbacks } from "../../lib/runtime_events/dump.ts";
import { RING_WINDOW_BYTES, STREAM_IMAGE_LIMIT } from "../../lib/runtime_events/consumer.ts";
import { refCustomDecoder } from "./fixture_decoders.ts";
import { counterClock, writeSparseRingFile } from "./helpers.ts";
import d8Dump from "../fixtures/runtime_events/d8/dump.txt" with { type: "text" };

const D8 = new URL("../fixtures/runtime_events/d8/18440.events", import.meta.url).pathname;
const decoders = new DecoderRegistry().register("ref.custom", refCustomDecoder);

function small(): Uint8Array {
  const p = new RuntimeEventsProducer({
    maxDomains: 2,
    logWsize: 10,
    pid: 3,
    clock: counterClock(),
  });
  p.start();
  p.begin(1, RuntimePhase.EV_MINOR);
  p.end(1, RuntimePhase.EV_MINOR);
  return p.bytes.slice();
}

function errorOf(f: () => unknown): RuntimeEventsFormatError {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof RuntimeEventsFormatError, `not the typed error: ${e}`);
    return e;
  }
  throw new Error("no error");
}

const set64 = (b: Uint8Array, at: number, v: bigint) =>
  new DataView(b.buffer, b.byteOffset).setBigUint64(at, v, true);

/** A file-like source counting what is read. */
class Counting implements RingSource {
  bytes = 0;
  biggest = 0;
  constructor(readonly inner: RingSource) {}
  size(): number {
    return this.inner.size();
  }
  readAt(offset: number, dst: Uint8Array): number {
    const n = this.inner.readAt(offset, dst);
    this.bytes += n;
    this.biggest = Math.max(this.biggest, dst.length);
    return n;
  }
  release(): void {
    this.inner.release?.();
  }
}

Deno.test("a corrupt data_offset is named at its own offset, with its exact value", () => {
  const b = small();
  set64(b, 48, (1n << 64n) - 1n);
  const e = errorOf(() => new RuntimeEventsCursor(b).readAll({}));
  assertEquals(e.offset, 48);
  assertEquals(e.domain, 0);
  assertEquals(
    e.reason,
    `data_offset 18446744073709551615 (the ring headers end at byte 224) puts ring 0 at byte ` +
      `18446744073709551615 (data_offset + 0 × ring_size_bytes 8192), beyond the end of the ` +
      `file (${b.length} bytes)`,
  );
  // A value just past 2^53 prints exactly.
  set64(b, 48, (1n << 53n) + 1n);
  const f = errorOf(() => new RuntimeEventsCursor(b).readAll({}));
  assertEquals([f.offset, f.domain], [48, 0]);
  assert.match(f.reason, /^data_offset 9007199254740993 \(the ring headers end at byte 224\) /);
});

Deno.test("other header fields at fault are named at their offsets; a short file at its end", async (t) => {
  await t.step("ring_header_size_bytes", () => {
    const b = small();
    set64(b, 16, 1n << 40n);
    const e = errorOf(() => new RuntimeEventsCursor(b).readAll({}));
    assertEquals([e.offset, e.domain], [16, 1]);
    assert.match(e.reason, /^ring_header_size_bytes 1099511627776 is not 80: headers_offset 64/);
  });
  await t.step("custom_events_offset", () => {
    const p = new RuntimeEventsProducer({ maxDomains: 1, logWsize: 10, pid: 3 });
    const ev = p.registerUserEvent("u", Type.unit);
    p.start();
    p.writeUser(0, ev);
    const b = p.bytes.slice();
    assert.match(dumpImage(b), /^0 \d+ user "u" unit$/m);
    set64(b, 56, 1n << 60n);
    const e = errorOf(() => dumpImage(b));
    assertEquals([e.offset, e.domain], [56, 0]);
    assert.match(
      e.reason,
      /^custom_events_offset 1152921504606846976 puts the name of user event 0 /,
    );
  });
  await t.step("a file cut before its second ring", () => {
    const b = small();
    const ring1 = 224 + 8192;
    const e = errorOf(() => new RuntimeEventsCursor(b.subarray(0, ring1)).readAll({}));
    assertEquals([e.offset, e.domain], [ring1, 1]);
    assert.match(e.reason, /^file truncated: data_offset 224 puts ring 1 at byte 8416/);
  });
});

Deno.test("stats of a ring of 200,000 matched phase pairs", () => {
  let t = 0;
  const p = new RuntimeEventsProducer({ maxDomains: 2, logWsize: 20, pid: 1, clock: () => t++ });
  p.start();
  for (let i = 0; i < 200_000; i++) {
    p.begin(0, RuntimePhase.EV_MINOR);
    p.end(0, RuntimePhase.EV_MINOR);
  }
  p.begin(1, RuntimePhase.EV_MINOR);
  p.end(1, RuntimePhase.EV_MINOR);
  const s = computeStats(p.bytes);
  assertEquals(s.domains[0].phases[0].count, 200_000);
  assertEquals(s.domains[0].phases[0].maxNs, 1);
  assertEquals(s.allPhases[0].count, 200_001);
  assertEquals(s.allPhases[0].totalNs, 200_001);
});

Deno.test("a file is read ring by ring: only headers, used ring words and names in use", () => {
  const src = new Counting(new RingFileSource(D8));
  const cursor = new RuntimeEventsCursor(src, { decoders }, D8);
  const lines: string[] = [];
  cursor.readAll(dumpCallbacks((l) => lines.push(l), { decoders }));
  assertEquals(lines.join("\n") + "\n", d8Dump);
  // 8 rings of 2^16 words, 4 used: 7,246 + 2,556 + 2,615 + 2,882 words (120 KiB), then each ring
  // header and position read again by the second poll: far from the 5 MiB of the file.
  const used = (7246 + 2556 + 2615 + 2882) * 8;
  assert.ok(src.bytes >= used && src.bytes < used + 16 * 1024, `read ${src.bytes} bytes`);
  assert.ok(src.biggest <= RING_WINDOW_BYTES);
  // openSync reads the same way, and holds no file between polls.
  const c = RuntimeEventsCursor.openSync(D8, { decoders });
  const again: string[] = [];
  c.readAll(dumpCallbacks((l) => again.push(l), { decoders }));
  assertEquals(again, lines);
});

Deno.test("an empty 2 GiB sparse ring file (4,096 rings of 2^16 words) costs kilobytes", () => {
  const path = Deno.makeTempFileSync({ suffix: ".events" });
  try {
    const layout = writeSparseRingFile(path, 4096, 16);
    assert.ok(layout.totalSize > 2 ** 31);
    const before = Deno.memoryUsage().rss;
    const src = new Counting(new RingFileSource(path));
    let events = 0;
    new RuntimeEventsCursor(src).readAll({ runtimeBegin: () => events++ });
    assertEquals(events, 0);
    assert.ok(src.bytes <= 64 + 4096 * 16, `read ${src.bytes} bytes`);
    const grown = Deno.memoryUsage().rss - before;
    assert.ok(grown < 64 * 2 ** 20, `resident memory grew by ${grown} bytes`);
    const stats = computeStats(RuntimeEventsCursor.openSync(path));
    assertEquals(stats.domains, []);
  } finally {
    Deno.removeSync(path);
  }
});

Deno.test("a device or pipe is read within a bound", async (t) => {
  await t.step("/dev/zero: its zero header is refused at once", () => {
    const e = errorOf(() => RuntimeEventsCursor.openSync("/dev/zero").readAll({}));
    assertEquals(e.offset, 32);
    assert.match(e.reason, /^ring_size_elements 0 does not match ring_size_bytes 0$/);
  });
  // The cursor reads a FIFO synchronously: another process writes into it.
  const fifoCase = async (image: Uint8Array, check: (c: () => RuntimeEventsCursor) => void) => {
    const dir = Deno.makeTempDirSync();
    try {
      const fifo = `${dir}/ring.fifo`, src = `${dir}/image`;
      Deno.writeFileSync(src, image);
      const mk = await new Deno.Command("mkfifo", { args: [fifo] }).output();
      assertEquals(mk.code, 0);
      const writer = new Deno.Command("sh", {
        args: ["-c", 'cat "$0" > "$1" 2>/dev/null; true', src, fifo],
      }).spawn();
      check(() => RuntimeEventsCursor.openSync(fifo, { decoders }));
      await writer.status;
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  };
  await t.step("a FIFO holding a ring file reads as the file", async () => {
    const image = Deno.readFileSync(D8);
    await fifoCase(image, (open) => {
      const lines: string[] = [];
      open().readAll(dumpCallbacks((l) => lines.push(l), { decoders }));
      assertEquals(lines.join("\n") + "\n", d8Dump);
    });
  });
  await t.step("a FIFO whose header describes more than the bound is refused", async () => {
    const b = small();
    set64(b, 56, BigInt(STREAM_IMAGE_LIMIT));
    await fifoCase(b.subarray(0, 4096), (open) => {
      const e = errorOf(open);
      assert.ok(e instanceof RuntimeEventsLimitError);
      assertEquals(e.offset, 56);
      assert.match(
        e.message,
        /^runtime_events input beyond a limit at byte 56: .* is not a regular file/,
      );
    });
  });
});

Deno.test("events dump and stats read a file ring by ring, and refuse /dev/zero at once", async () => {
  const events = (args: string[]) =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-read", "--allow-write", "cli/events.ts", ...args],
      cwd: new URL("../../", import.meta.url).pathname,
      stdout: "piped",
      stderr: "piped",
    }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  const dump = await events(["dump", D8, "--decoders", "tests/runtime_events/fixture_decoders.ts"]);
  assertEquals([dump.code, text(dump.stderr)], [0, ""]);
  assert.ok(text(dump.stdout) === d8Dump, "dump of the file differs from the reference");
  const zero = await events(["dump", "/dev/zero"]);
  assertEquals(zero.code, 1);
  assertEquals(
    text(zero.stderr),
    "error: corrupt runtime_events stream at byte 32: ring_size_elements 0 does not match " +
      "ring_size_bytes 0\n",
  );
  const path = Deno.makeTempFileSync({ suffix: ".events" });
  try {
    let t = 0;
    const p = new RuntimeEventsProducer({ maxDomains: 1, logWsize: 20, pid: 1, clock: () => t++ });
    p.start();
    for (let i = 0; i < 200_000; i++) {
      p.begin(0, RuntimePhase.EV_MAJOR);
      p.end(0, RuntimePhase.EV_MAJOR);
    }
    Deno.writeFileSync(path, p.bytes);
    const stats = await events(["stats", path, "--json"]);
    assertEquals([stats.code, text(stats.stderr)], [0, ""]);
    assertEquals(JSON.parse(text(stats.stdout)).allPhases[0].count, 200_000);
  } finally {
    Deno.removeSync(path);
  }
});
