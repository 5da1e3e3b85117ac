// The `events` command, run in-process with its file and console access stubbed
// (so the test needs no permissions).
import { assert, assertEquals } from "./assert.ts";
import d8Image from "../fixtures/runtime_events/d8/18440.events" with {
  type: "bytes",
};
import d8Dump from "../fixtures/runtime_events/d8/dump.txt" with { type: "text" };
import e10Image from "../fixtures/runtime_events/e10/18448.events" with {
  type: "bytes",
};
import { run } from "../../cli/events.ts";
import { eventsCliStub } from "./cli_stub.ts";
import * as fixtureDecoders from "./fixture_decoders.ts";

const stub = eventsCliStub;

const files = { "d8.events": d8Image, "e10.events": e10Image };
const modules = { "./dec.ts": fixtureDecoders as Record<string, unknown> };

Deno.test("events dump with --decoders reproduces the reference dump", async () => {
  const io = stub(files, modules);
  assertEquals(await run(["dump", "d8.events", "--decoders", "./dec.ts"], io), 0);
  assertEquals(io.out, d8Dump);
  assertEquals(io.err, "");
});

Deno.test("events dump without decoders prints custom payloads in hex", async () => {
  const io = stub(files);
  assertEquals(await run(["dump", "d8.events"], io), 0);
  assert.match(
    io.out,
    /^0 744340266132 user "ref\.custom" custom 0568656c6c6f87d61200000000000000000000000a40$/m,
  );
});

Deno.test("events stats reports OCaml's lost words and the estimate", async () => {
  const io = stub(files);
  assertEquals(await run(["stats", "e10.events"], io), 0);
  assert.match(
    io.out,
    /^ {2}lostWords 6471 \(ring words: OCaml's lost_events figure\); lostEventsEstimate \d+ \(events/m,
  );
  assert.match(
    io.out,
    /^ {2}name +count +totalNs +p50Ns +p99Ns +maxNs +unmatchedBegins +unmatchedEnds$/m,
  );
  const json = stub(files);
  assertEquals(await run(["stats", "e10.events", "--json"], json), 0);
  assertEquals(JSON.parse(json.out).domains.map((d: { lostWords: number }) => d.lostWords), [
    6471,
    2036,
    1436,
    1567,
  ]);
});

Deno.test("events: help, usage errors and bad input", async (t) => {
  await t.step("--help", async () => {
    for (const args of [["--help"], ["dump", "--help"], ["stats", "-h"]]) {
      const io = stub(files);
      assertEquals(await run(args, io), 0);
      assert.match(io.out, /^Usage: memprof-lab events/);
    }
  });
  await t.step("usage errors exit 2", async () => {
    for (const args of [["frob"], ["dump"], ["dump", "a", "b"], ["dump", "d8.events", "--bogus"]]) {
      const io = stub(files);
      assertEquals(await run(args, io), 2, args.join(" "));
      assert.match(io.err, /^error: .*\nRun 'memprof-lab events( dump)? --help' for usage\.\n$/);
    }
    // No command at all: the usage itself, on stderr.
    const none = stub(files);
    assertEquals(await run([], none), 2);
    assert.match(none.err, /^error: missing command\nUsage: memprof-lab events <command>/);
    assertEquals(none.out, "");
  });
  await t.step("missing file, bad decoders module", async () => {
    let io = stub(files);
    assertEquals(await run(["dump", "nope.events"], io), 1);
    assertEquals(io.err, "error: no such file: nope.events\n");
    io = stub(files, { "./five.ts": { default: 5 } });
    assertEquals(await run(["dump", "d8.events", "--decoders", "./five.ts"], io), 1);
    assert.match(io.err, /must export/);
    io = stub(files);
    assertEquals(await run(["dump", "d8.events", "--decoders", "./missing.ts"], io), 1);
    assert.match(io.err, /cannot load decoders module \.\/missing\.ts/);
  });
  await t.step("corrupt file: events before the fault, then the located error", async () => {
    const bad = d8Image.slice();
    // Zero the header word of ring 1's first message (data_offset 704, rings of 524288 bytes).
    const ring1 = 704 + 524288;
    bad.fill(0, ring1, ring1 + 8);
    const cursorOut = stub({ "bad.events": bad }, modules);
    assertEquals(await run(["dump", "bad.events", "--decoders", "./dec.ts"], cursorOut), 1);
    assertEquals(
      cursorOut.err,
      `error: corrupt runtime_events stream in ring 1 at byte ${ring1}: message of invalid length 0\n`,
    );
    // Ring 0 was printed in full before the error.
    assertEquals(cursorOut.out, d8Dump.slice(0, d8Dump.indexOf("\n1 ") + 1));
  });
});
