// The real traces in tests/fixtures/memtrace: our dump must equal the reference dump made
// with memtrace's own reader, and decode+re-encode must give exactly what memtrace's copy gives.
import assert from "node:assert/strict";
import { copyTrace, dumpTraceToString, MemorySink, Reader } from "../../lib/memtrace/mod.ts";

import edgeCtf from "../fixtures/memtrace/edge_writer_api.ctf" with { type: "bytes" };
import edgeTxt from "../fixtures/memtrace/edge_writer_api.txt" with { type: "text" };
import singleCtf from "../fixtures/memtrace/single_1e-4.ctf" with { type: "bytes" };
import singleTxt from "../fixtures/memtrace/single_1e-4.txt" with { type: "text" };
import extCtf from "../fixtures/memtrace/external_2e-5.ctf" with { type: "bytes" };
import extTxt from "../fixtures/memtrace/external_2e-5.txt" with { type: "text" };
import multiCtf from "../fixtures/memtrace/multi_mdtrace_3e-4.renumbered.ctf" with {
  type: "bytes",
};
import multiTxt from "../fixtures/memtrace/multi_mdtrace_3e-4.renumbered.txt" with {
  type: "text",
};
import ocamloptCtf from "../fixtures/memtrace/ocamlopt.ctf" with { type: "bytes" };
import ocamloptTxtGz from "../fixtures/memtrace/ocamlopt.txt.gz" with {
  type: "bytes",
};
import v1Ctf from "../fixtures/memtrace/lists_and_sets_v1_e8e7dbe.ctf" with {
  type: "bytes",
};
import v1TxtGz from "../fixtures/memtrace/lists_and_sets_v1_e8e7dbe.txt.gz" with {
  type: "bytes",
};
import v1CopyCtf from "../fixtures/memtrace/lists_and_sets_v1_e8e7dbe.copy-v3.ctf" with {
  type: "bytes",
};
import singleCodes from "../fixtures/memtrace/single_1e-4.codes.txt" with {
  type: "text",
};
import multiCodes from "../fixtures/memtrace/multi_mdtrace_3e-4.renumbered.codes.txt" with {
  type: "text",
};
import singleLocs from "../fixtures/memtrace/single_1e-4.locs.txt" with {
  type: "text",
};

async function gunzip(bytes: Uint8Array): Promise<string> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(
    new DecompressionStream("gzip"),
  );
  return await new Response(stream).text();
}

/** First differing line, with its neighbours, for a readable failure. */
function firstDifference(got: string, want: string): string {
  const g = got.split("\n"), w = want.split("\n");
  for (let i = 0; i < Math.max(g.length, w.length); i++) {
    if (g[i] !== w[i]) {
      return `line ${i + 1}:\n  got:  ${g[i]?.slice(0, 400)}\n  want: ${w[i]?.slice(0, 400)}`;
    }
  }
  return "identical";
}

const traces: {
  name: string;
  ctf: Uint8Array;
  dump: () => Promise<string>;
  copy: Uint8Array;
  version: number;
}[] = [
  {
    name: "edge_writer_api",
    ctf: edgeCtf,
    dump: () => Promise.resolve(edgeTxt),
    copy: edgeCtf,
    version: 3,
  },
  {
    name: "single_1e-4",
    ctf: singleCtf,
    dump: () => Promise.resolve(singleTxt),
    copy: singleCtf,
    version: 3,
  },
  {
    name: "external_2e-5",
    ctf: extCtf,
    dump: () => Promise.resolve(extTxt),
    copy: extCtf,
    version: 3,
  },
  {
    name: "multi_mdtrace_3e-4.renumbered",
    ctf: multiCtf,
    dump: () => Promise.resolve(multiTxt),
    copy: multiCtf,
    version: 3,
  },
  {
    name: "ocamlopt",
    ctf: ocamloptCtf,
    dump: () => gunzip(ocamloptTxtGz),
    copy: ocamloptCtf,
    version: 3,
  },
  {
    name: "lists_and_sets_v1_e8e7dbe",
    ctf: v1Ctf,
    dump: () => gunzip(v1TxtGz),
    copy: v1CopyCtf,
    version: 1,
  },
];

Deno.test("trace dump equals the reference dump of every fixture", async (t) => {
  for (const tr of traces) {
    await t.step(tr.name, async () => {
      const got = dumpTraceToString(Reader.fromBytes(tr.ctf));
      const want = await tr.dump();
      assert.ok(got === want, `dump of ${tr.name} differs at ${firstDifference(got, want)}`);
    });
  }
});

Deno.test("trace copy reproduces memtrace's copy byte for byte", async (t) => {
  for (const tr of traces) {
    await t.step(`${tr.name} (v${tr.version})`, () => {
      const sink = new MemorySink();
      copyTrace(Reader.fromBytes(tr.ctf), sink);
      const got = sink.bytes();
      let i = 0;
      while (i < got.length && i < tr.copy.length && got[i] === tr.copy[i]) i++;
      assert.equal(got.length, tr.copy.length, `size differs; first differing byte at ${i}`);
      assert.equal(i, got.length, `first differing byte at offset ${i}`);
    });
  }
  await t.step("the v1 trace really changes when copied (v3 headers)", () => {
    assert.notEqual(v1Ctf.length, v1CopyCtf.length);
  });
});

/** Raw event values in the `X.codes.txt` format. */
function codesDump(ctf: Uint8Array): string {
  const r = Reader.fromBytes(ctf);
  const src = ["minor", "major", "external"];
  const lines: string[] = [];
  r.iter((dt, ev) => {
    if (ev.kind === "alloc") {
      lines.push(
        `${dt} ${ev.domain} alloc id=${ev.objId} len=${ev.length} n=${ev.nsamples} src=${
          src[ev.source]
        } pfx=${ev.commonPrefix} bt=[${ev.backtrace().join(",")}]`,
      );
    } else lines.push(`${dt} ${ev.domain} ${ev.kind} id=${ev.objId}`);
  });
  return lines.join("\n") + "\n";
}

/** The lines of {@linkcode codesDump}, read through `Reader.iterViews`'s reused view. */
function codesDumpViews(ctf: Uint8Array): string {
  const src = ["minor", "major", "external"];
  const lines: string[] = [];
  const views = new Set<object>();
  Reader.fromBytes(ctf).iterViews((ev) => {
    views.add(ev);
    if (ev.kind === "alloc") {
      const bt = Array.from(ev.backtraceBuffer.subarray(0, ev.backtraceLength));
      lines.push(
        `${ev.time} ${ev.domain} alloc id=${ev.objId} len=${ev.length} n=${ev.nsamples} src=${
          src[ev.source]
        } pfx=${ev.commonPrefix} bt=[${bt.join(",")}]`,
      );
    } else lines.push(`${ev.time} ${ev.domain} ${ev.kind} id=${ev.objId}`);
  });
  assert.ok(views.size <= 1, "one view per iteration");
  return lines.join("\n") + "\n";
}

Deno.test("iterViews delivers through one view the events iter delivers, on every fixture", () => {
  for (const f of traces) {
    const got = codesDumpViews(f.ctf), want = codesDump(f.ctf);
    assert.ok(got === want, `${f.name}: views differ at ${firstDifference(got, want)}`);
  }
  assert.equal(codesDumpViews(singleCtf), singleCodes);
});

Deno.test("readers iterated in turn, a packet at a time, read what each reads alone", () => {
  const alone = [ocamloptCtf, multiCtf, v1Ctf].map(codesDump);
  const lines: string[][] = [[], [], []];
  const its = [ocamloptCtf, multiCtf, v1Ctf].map((ctf, i) =>
    Reader.fromBytes(ctf).iterate((dt, ev) => {
      lines[i].push(
        ev.kind === "alloc"
          ? `${dt} ${ev.domain} alloc id=${ev.objId} bt=[${ev.backtrace().join(",")}]`
          : `${dt} ${ev.domain} ${ev.kind} id=${ev.objId}`,
      );
    })
  );
  // Finished iterations (those of `alone`) hand their backtrace caches to the next readers that
  // need one: these take them, zeroed, and must not disturb one another.
  let live = its.length;
  while (live > 0) {
    live = 0;
    for (const it of its) if (it.advance(1)) live++;
  }
  for (let i = 0; i < alone.length; i++) {
    const want = alone[i].split("\n").filter((l) => l !== "").map((l) =>
      l.replace(/ len=\S+ n=\S+ src=\S+ pfx=\S+/, "")
    );
    assert.deepEqual(lines[i], want);
  }
});

Deno.test("raw event values equal the reference codes files", async (t) => {
  for (
    const [name, ctf, want] of [
      ["single_1e-4", singleCtf, singleCodes],
      ["multi_mdtrace_3e-4.renumbered", multiCtf, multiCodes],
    ] as const
  ) {
    await t.step(name, () => {
      const got = codesDump(ctf);
      assert.ok(got === want, `codes of ${name} differ at ${firstDifference(got, want)}`);
    });
  }
});

Deno.test("location table equals the reference locs file", () => {
  const r = Reader.fromBytes(singleCtf);
  const order: number[] = [];
  const counts = new Map<number, number>();
  r.iter((_dt, ev) => {
    if (ev.kind !== "alloc") return;
    for (const c of ev.backtrace()) {
      if (!counts.has(c)) order.push(c);
      counts.set(c, (counts.get(c) ?? 0) + 1);
    }
  });
  const q = (s: string) => JSON.stringify(s);
  const got = order.map((c) => {
    const locs = r.lookupLocationCode(c).map((l) =>
      ` {file=${q(l.filename)} line=${l.line} start=${l.startChar} end=${l.endChar} def=${
        q(l.defname)
      }}`
    ).join("");
    return `${c} (0x${c.toString(16)}) ${r.lookupLocationCode(c).length}:${locs}`;
  }).join("\n") + "\n";
  assert.ok(got === singleLocs, `locs differ at ${firstDifference(got, singleLocs)}`);
});

Deno.test("iterating without backtraces yields the same events, with empty backtraces", () => {
  const full = Reader.fromBytes(ocamloptCtf).readAll();
  const bare = Reader.fromBytes(ocamloptCtf).readAll({ parseBacktraces: false });
  assert.equal(bare.length, full.length);
  for (let i = 0; i < full.length; i++) {
    const a = full[i], b = bare[i];
    assert.equal(b.time, a.time);
    assert.equal(b.event.kind, a.event.kind);
    assert.equal(b.event.objId, a.event.objId);
    if (b.event.kind === "alloc") assert.equal(b.event.backtraceLength, 0);
  }
});

Deno.test("reader info and size of the v1 trace", () => {
  const r = Reader.fromBytes(v1Ctf);
  assert.equal(r.info.pid, 17210n);
  assert.equal(r.info.context, undefined);
  assert.equal(r.info.startTime, 1586965748856814);
  assert.equal(r.sizeBytes(), 17759);
});
