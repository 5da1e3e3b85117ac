// watch: following a ring file while another process writes it — our
// producer in a subprocess (ring_writer.ts), and a real OCaml 5.3 program when
// an OCaml 5.3 toolchain is found (tests/real_toolchain.ts). The assertions
// hold whatever the timing: every event is delivered once and in order, and
// what is missing is exactly what was reported lost.
import { assert, assertEquals } from "./assert.ts";
import {
  type ConsumerCallbacks,
  eventsFilePath,
  GcStatsCollector,
  Lifecycle,
  RingFollower,
  RuntimeEventsProducer,
  RuntimePhase,
  Type,
  type WatchResult,
  watchRing,
} from "../../lib/runtime_events/mod.ts";
import type { WriterConfig, WriterReport } from "./ring_writer.ts";
import { REAL_OCAML, skipNotice } from "../real_toolchain.ts";
import { statistics } from "../verbose.ts";

const writerScript = new URL("./ring_writer.ts", import.meta.url).pathname;
const cliScript = new URL("../../cli/events.ts", import.meta.url).pathname;
const cwd = new URL("../../", import.meta.url).pathname;

interface Delivered {
  /** Per ring: values of `seq` events, and lost reports, in delivery order. */
  items: Map<number, ({ value: number; ts: bigint } | { lost: number })[]>;
  /** Per ring: ring words delivered (padding included) plus lost words. */
  words: Map<number, number>;
}

function recorder(): { d: Delivered; callbacks: ConsumerCallbacks } {
  const d: Delivered = { items: new Map(), words: new Map() };
  const list = (r: number) => {
    let l = d.items.get(r);
    if (l === undefined) d.items.set(r, l = []);
    return l;
  };
  const add = (r: number, w: number) => d.words.set(r, (d.words.get(r) ?? 0) + w);
  return {
    d,
    callbacks: {
      message: (r, _pos, words) => add(r, words),
      lostEvents: (r, words) => {
        add(r, words);
        list(r).push({ lost: words });
      },
      userInt: (r, ts, _ev, value) => list(r).push({ value: Number(value), ts }),
    },
  };
}

function spawnWriter(cfg: Omit<WriterConfig, "report">, report: string): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      writerScript,
      JSON.stringify({ ...cfg, report }),
    ],
    stdout: "null",
    stderr: "inherit",
  }).spawn();
}

/** Checks a watch against the writer's report; returns the lost words. */
function check(d: Delivered, report: WriterReport, maxDomains: number): number {
  let lost = 0;
  for (let r = 0; r < maxDomains; r++) {
    // Every ring word up to the final tail was either delivered or reported lost.
    assertEquals(d.words.get(r) ?? 0, report.tails[r], `ring ${r} words`);
    const items = d.items.get(r) ?? [];
    let prev: { value: number; ts: bigint } | null = null;
    let lostSince = false;
    for (const it of items) {
      if ("lost" in it) {
        lost += it.lost;
        lostSince = true;
        continue;
      }
      assertEquals(it.value % maxDomains, r, "value on its ring");
      if (prev !== null) {
        assert.ok(
          it.value > prev.value && it.ts > prev.ts,
          `ring ${r}: ${it.value} after ${prev.value}`,
        );
        // A gap in the sequence only after a lost report.
        if (it.value !== prev.value + maxDomains) {
          assert.ok(lostSince, `ring ${r}: gap before ${it.value}`);
        }
      } else if (it.value !== r) {
        assert.ok(lostSince, `ring ${r} starts at ${it.value} without a lost report`);
      }
      prev = it;
      lostSince = false;
    }
    assertEquals(prev?.value ?? -1, report.last[r], `ring ${r}: last value`);
  }
  return lost;
}

async function watchWriter(
  cfg: Omit<WriterConfig, "report" | "dir">,
  options: { withPid: boolean; waitForFile?: boolean } = { withPid: true },
): Promise<{ result: WatchResult; d: Delivered; report: WriterReport; waiting: string[] }> {
  const dir = await Deno.makeTempDir({ prefix: "watch_test_" });
  try {
    const reportPath = `${dir}/report.json`;
    const child = spawnWriter({ ...cfg, dir }, reportPath);
    const status = child.status;
    const { d, callbacks } = recorder();
    const waiting: string[] = [];
    const result = await watchRing({
      path: eventsFilePath(dir, child.pid),
      pid: options.withPid ? child.pid : undefined,
      intervalMs: 5,
      callbacks,
      signal: AbortSignal.timeout(60_000),
      onWaiting: (m) => waiting.push(m),
    });
    assertEquals((await status).code, 0);
    const report = JSON.parse(await Deno.readTextFile(reportPath)) as WriterReport;
    return { result, d, report, waiting };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("watch follows a producer in another process and reports ring wrap-around as lost", async () => {
  const batches = [
    ...Array.from({ length: 20 }, () => ({ events: 30, pauseMs: 10 })),
    { events: 3000, pauseMs: 20 }, // far more than a 512-word ring holds between two polls
    ...Array.from({ length: 20 }, () => ({ events: 30, pauseMs: 10 })),
  ];
  const { result, d, report } = await watchWriter({
    maxDomains: 2,
    logWsize: 9,
    batches,
    end: "remove",
  });
  assertEquals(result.reason, "removed");
  const lost = check(d, report, 2);
  assert.ok(lost > 0, "the burst must have been reported lost");
  assertEquals(result.lostWords, lost);
  assertEquals(report.written, 3000 + 40 * 30);
});

Deno.test("watch delivers every event once, in order, when the ring never wraps", async () => {
  const { result, d, report, waiting } = await watchWriter({
    maxDomains: 3,
    logWsize: 14,
    batches: Array.from({ length: 25 }, (_, i) => ({ events: 20 + i, pauseMs: 8 })),
    startDelayMs: 300, // the watch starts before the file exists
    end: "remove",
  });
  assertEquals(result.reason, "removed");
  assertEquals(check(d, report, 3), 0);
  const values = [...d.items.values()].flat().map((x) => ("value" in x ? x.value : -1));
  assertEquals(values.sort((a, b) => a - b), Array.from({ length: report.written }, (_, i) => i));
  assertEquals(waiting.length, 1);
  assert.match(waiting[0], /^waiting for .*\.events \(process \d+\)$/);
});

Deno.test("watch DIR PID ends when the process exits and leaves its file", async () => {
  const { result, d, report } = await watchWriter({
    maxDomains: 2,
    logWsize: 10,
    batches: Array.from({ length: 10 }, () => ({ events: 50, pauseMs: 10 })),
    end: "keep",
  });
  assertEquals(result.reason, "exited");
  check(d, report, 2);
});

Deno.test("watch ends after EV_RING_STOP when it has no process to check", async () => {
  const dir = await Deno.makeTempDir({ prefix: "watch_test_" });
  try {
    const p = new RuntimeEventsProducer({ maxDomains: 1, logWsize: 10, pid: 4242, preserve: true });
    const seq = p.registerUserEvent("seq", Type.int);
    p.start();
    p.writeUser(0, seq, 1);
    p.destroy(); // EV_RING_STOP
    const path = p.saveSync(dir);
    const seen: number[] = [];
    const result = await watchRing({
      path,
      intervalMs: 5,
      callbacks: { lifecycle: (_d, _ts, ev) => seen.push(ev) },
      signal: AbortSignal.timeout(10_000),
    });
    assertEquals(result.reason, "ring_stopped");
    assertEquals(seen, [Lifecycle.EV_RING_START, Lifecycle.EV_RING_STOP]);
    assertEquals(result.events, 3);
    // Aborting ends a watch too.
    const aborted = await watchRing({
      path: `${dir}/none.events`,
      intervalMs: 5,
      callbacks: {},
      signal: AbortSignal.timeout(50),
    });
    assertEquals(aborted.reason, "interrupted");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("RingFollower reads only new words and resumes at the head after a wrap", () => {
  const p = new RuntimeEventsProducer({ maxDomains: 1, logWsize: 9, pid: 1, clock: () => 5 });
  const seq = p.registerUserEvent("seq", Type.int);
  p.start();
  let reads = 0;
  let bytesRead = 0;
  const file = {
    readAt(offset: number, dst: Uint8Array): number {
      reads++;
      bytesRead += dst.length;
      dst.set(p.bytes.subarray(offset, offset + dst.length));
      return dst.length;
    },
    size: () => p.bytes.length,
    close() {},
  };
  const f = new RingFollower("mem", file);
  const got: (number | string)[] = [];
  const cb: ConsumerCallbacks = {
    userInt: (_d, _ts, _e, v) => got.push(Number(v)),
    lostEvents: (_d, w) => got.push(`lost ${w}`),
  };
  p.writeUser(0, seq, 1);
  p.writeUser(0, seq, 2);
  f.poll(cb);
  assertEquals(got, [1, 2]);
  bytesRead = 0;
  p.writeUser(0, seq, 3);
  f.poll(cb);
  assertEquals(got, [1, 2, 3]);
  // Two header reads (80 bytes), one message (3 words); the name slot is cached.
  assertEquals(bytesRead, 80 + 80 + 24);
  for (let i = 4; i < 400; i++) p.writeUser(0, seq, i);
  f.poll(cb);
  const lost = got.find((x) => typeof x === "string") as string;
  assert.match(lost, /^lost \d+$/);
  assertEquals(got[got.length - 1], 399);
  assertEquals(f.position(0), p.ringTail(0));
  assert.ok(reads > 0);
});

async function readUntil(
  stream: ReadableStream<Uint8Array>,
  re: RegExp,
): Promise<{ text: string; rest: ReadableStreamDefaultReader<Uint8Array> }> {
  const reader = stream.getReader();
  const dec = new TextDecoder();
  let text = "";
  while (!re.test(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += dec.decode(value, { stream: true });
  }
  return { text, rest: reader };
}

async function drain(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  const dec = new TextDecoder();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return text;
    text += dec.decode(value, { stream: true });
  }
}

function spawnCli(args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", "--allow-write", "--allow-run=kill", cliScript, ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

Deno.test("events watch DIR PID prints events and lost_events lines, then why it stopped", async () => {
  const dir = await Deno.makeTempDir({ prefix: "watch_cli_" });
  try {
    const writer = spawnWriter({
      dir,
      maxDomains: 2,
      logWsize: 9,
      batches: [{ events: 10, pauseMs: 400 }, { events: 2000, pauseMs: 50 }, {
        events: 10,
        pauseMs: 0,
      }],
      end: "remove",
    }, `${dir}/report.json`);
    const cli = spawnCli(["watch", dir, String(writer.pid), "--interval", "20"]);
    const [out, err, code] = await Promise.all([
      drain(cli.stdout.getReader()),
      drain(cli.stderr.getReader()),
      cli.status.then((s) => s.code),
    ]);
    assertEquals((await writer.status).code, 0);
    assertEquals(code, 0, err);
    assert.match(out, /^0 lost_events \d+$/m);
    assert.match(out, /^1 \d+ user "seq" int 2019$/m); // the last event of ring 1
    assert.match(out, /^0 \d+ begin minor$/m);
    assert.match(err, /^watching .*\.events \(process \d+\)$/m);
    assert.match(
      err,
      /^watch: .*\.events was removed \(the program ended\); \d+ events read, \d+ ring words lost \(overwritten before they could be read\)$/m,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("events watch --stats prints a summary each second and the gc-stats report", async () => {
  const dir = await Deno.makeTempDir({ prefix: "watch_cli_" });
  try {
    const writer = spawnWriter({
      dir,
      maxDomains: 2,
      logWsize: 12,
      batches: Array.from({ length: 50 }, () => ({ events: 40, pauseMs: 50 })),
      end: "keep",
    }, `${dir}/report.json`);
    const cli = spawnCli(["watch", dir, String(writer.pid), "--stats", "--interval", "20"]);
    const [out, err, code] = await Promise.all([
      drain(cli.stdout.getReader()),
      drain(cli.stderr.getReader()),
      cli.status.then((s) => s.code),
    ]);
    await writer.status;
    assertEquals(code, 0, err);
    assert.match(
      out,
      /^\[1\.\d+s\] events \+\d+ \(\d+\) \| minor \+\d+ major \+0 \| pauses \+\d+: /m,
    );
    assert.match(out, /^GC statistics of .*\.events$/m);
    // 2000 ints, a minor phase around every 5th, and ring_start.
    assert.match(out, /^collections: minor 200, /m);
    assert.match(err, /^watch: process \d+ has exited; 2801 events read, none lost$/m);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("events watch exits 130 with a message on Ctrl-C", async () => {
  const dir = await Deno.makeTempDir({ prefix: "watch_cli_" });
  try {
    const p = new RuntimeEventsProducer({ maxDomains: 1, logWsize: 10, pid: 777 });
    p.start();
    p.begin(0, RuntimePhase.EV_MINOR);
    const path = p.saveSync(dir);
    const cli = spawnCli(["watch", "--path", path]);
    const err = await readUntil(cli.stderr, /watching /);
    const out = await readUntil(cli.stdout, /begin minor\n/);
    assert.match(out.text, /^0 \d+ lifecycle ring_start Some 777\n0 \d+ begin minor\n$/);
    cli.kill("SIGINT");
    const rest = await drain(err.rest);
    await drain(out.rest);
    assertEquals((await cli.status).code, 130);
    assert.match(err.text + rest, /^watch: interrupted; 2 events read, none lost$/m);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const OCAMLOPT = REAL_OCAML.toolchain?.ocamlopt;
if (REAL_OCAML.why !== undefined) {
  skipNotice("watch against a real OCaml program", REAL_OCAML.why);
}

const PROGRAM = `
let () =
  let keep = Array.make 512 [] in
  let i = ref 0 in
  while Sys.time () < 1.5 do
    keep.(!i land 511) <- List.init 40 (fun k -> k + !i);
    incr i
  done;
  Printf.printf "%d\\n" !i
`;

Deno.test({
  name: "watch follows a real OCaml 5.3 program allocating in a loop until it exits",
  ignore: OCAMLOPT === undefined,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "watch_ocaml_" });
    try {
      await Deno.writeTextFile(`${dir}/alloc.ml`, PROGRAM);
      const [compiler, ...pre] = OCAMLOPT!;
      const build = await new Deno.Command(compiler, {
        args: [...pre, "alloc.ml", "-o", "alloc.exe"],
        cwd: dir,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assertEquals(build.code, 0, new TextDecoder().decode(build.stderr));
      const child = new Deno.Command(`${dir}/alloc.exe`, {
        cwd: dir,
        env: { OCAML_RUNTIME_EVENTS_START: "1", OCAML_RUNTIME_EVENTS_DIR: dir },
        stdout: "piped",
      }).spawn();
      const output = child.output();
      const { d, callbacks } = recorder();
      const stats = new GcStatsCollector();
      const last = new Map<number, bigint>();
      let ringStart: bigint | null = null;
      const mono = (r: number, ts: bigint) => {
        assert.ok(ts >= (last.get(r) ?? 0n), `ring ${r}: time goes back`);
        last.set(r, ts);
      };
      const s = stats.callbacks;
      const result = await watchRing({
        path: eventsFilePath(dir, child.pid),
        pid: child.pid,
        intervalMs: 50,
        signal: AbortSignal.timeout(60_000),
        callbacks: {
          ...s,
          message: callbacks.message,
          lostEvents: (r, w) => {
            callbacks.lostEvents!(r, w);
            s.lostEvents!(r, w);
          },
          runtimeBegin: (r, ts, ph) => (mono(r, ts), s.runtimeBegin!(r, ts, ph)),
          runtimeEnd: (r, ts, ph) => (mono(r, ts), s.runtimeEnd!(r, ts, ph)),
          runtimeCounter: (r, ts, c, v) => (mono(r, ts), s.runtimeCounter!(r, ts, c, v)),
          lifecycle: (r, ts, ev, data) => {
            mono(r, ts);
            if (ev === Lifecycle.EV_RING_START) {
              ringStart = ts;
              assertEquals(data, BigInt(child.pid));
            }
            s.lifecycle!(r, ts, ev, data);
          },
        },
      });
      const out = await output;
      assertEquals(out.code, 0);
      assert.ok(Number(new TextDecoder().decode(out.stdout)) > 0);
      // OCaml removes the file at exit (no OCAML_RUNTIME_EVENTS_PRESERVE).
      assertEquals(result.reason, "removed");
      const g = stats.snapshot();
      assert.ok(g.collections.minor > 0, "minor collections seen");
      assert.ok(g.allocations.minorWords > 0, "minor allocations counted");
      assert.ok(g.latency.count > 0, "pauses measured");
      const ring0Lost = (d.items.get(0) ?? []).some((x) => "lost" in x);
      if (!ring0Lost) assert.ok(ringStart !== null, "ring_start seen when nothing was lost");
      // Everything up to each ring's final tail was read or reported lost.
      assert.ok(result.rings.length > 0);
      for (const r of result.rings) {
        assertEquals(r.position, r.tail, `ring ${r.domain} read to its tail`);
        assertEquals(d.words.get(r.domain), r.tail, `ring ${r.domain}: words read + lost`);
      }
      statistics(
        `  real OCaml: ${result.events} events in ${result.polls} polls, ` +
          `${result.lostWords} ring words lost, ${g.collections.minor} minor collections`,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
