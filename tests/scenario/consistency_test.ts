// The trace a run writes agrees with its callback log: each allocation callback that returned a
// value is one Alloc event with the same size, samples, source, domain and stack; promotions and
// deallocations of those blocks are Promote and Collect events of the same object. Every
// profile's tracked blocks are balanced, and memprof's invariants hold after every step.
import assert from "node:assert/strict";
import { AllocationSource, Reader } from "../../lib/memtrace/mod.ts";
import { runScenario } from "../../lib/scenario/mod.ts";
import { scenarios } from "../../scenarios/index.ts";

const ALLOC =
  /^i=(?:-|\d+(?:\.\d+)*) t=(\d+) \S+@(\d+) \S+ (alloc_minor|alloc_major) #(\d+) size=(\d+) n=(\d+) src=\S+ stack=\[(.*)\] -> Some #\d+ id=(\d+)$/;
const LATER =
  /^i=(?:-|\d+(?:\.\d+)*) t=\d+ \S+@\d+ \S+ (promote|dealloc_minor|dealloc_major) #(\d+)/;

for (const sc of scenarios.filter((s) => s.settings.log.format === "default")) {
  Deno.test(`${sc.settings.name}: trace agrees with the callback log`, () => {
    const r = runScenario(sc, { checkInvariants: true });
    const reader = Reader.fromBytes(r.ctf);
    const allocs = new Map<
      number,
      { time: number; len: number; n: number; src: number; dom: number; bt: string }
    >();
    const promoted = new Set<number>(), collected = new Set<number>();
    let external = 0;
    reader.iter((time, ev) => {
      if (ev.kind === "alloc") {
        if (ev.source === AllocationSource.External) {
          external++;
          return;
        }
        const bt = ev.backtrace().map((c) => reader.lookupLocationCode(c).join(" ")).join(" ");
        allocs.set(ev.objId, {
          time,
          len: ev.length,
          n: ev.nsamples,
          src: ev.source,
          dom: ev.domain,
          bt,
        });
      } else if (ev.kind === "promote") promoted.add(ev.objId);
      else collected.add(ev.objId);
    });
    const objOf = new Map<string, number>();
    let traced = 0;
    for (const line of r.callbackLog.split("\n")) {
      const m = ALLOC.exec(line);
      if (m !== null) {
        const [, t, dom, kind, serial, size, n, stack, id] = m;
        const a = allocs.get(Number(id));
        assert.ok(a !== undefined, `no Alloc event for: ${line}`);
        assert.equal(a.len, Number(size), line);
        assert.equal(a.n, Number(n), line);
        assert.equal(a.dom, Number(dom), line);
        assert.equal(
          a.src,
          kind === "alloc_minor" ? AllocationSource.Minor : AllocationSource.Major,
        );
        // Same time base (the log gives the callback's start, the trace the allocation's record,
        // written when the callback returns: later if the callback spent time, e.g. collecting)
        // and the same frame order as the trace.
        assert.ok(a.time >= Number(t), `${line}: trace time ${a.time}`);
        assert.equal(a.bt, stack, line);
        objOf.set(serial, Number(id));
        traced++;
        continue;
      }
      const l = LATER.exec(line);
      // A callback that raised wrote nothing (its actions run before the tracer's write).
      if (l !== null && objOf.has(l[2]) && !line.includes("-> raise")) {
        const id = objOf.get(l[2])!;
        if (l[1] === "promote") assert.ok(promoted.has(id), `no Promote event for: ${line}`);
        else assert.ok(collected.has(id), `no Collect event for: ${line}`);
      }
    }
    assert.equal(allocs.size, traced, "Alloc events without an allocation callback");
    assert.equal(external, r.summary.tracer.externalAllocs);
    for (const b of r.summary.balance) {
      assert.ok(b.ok, `${b.profile}: unbalanced ${JSON.stringify(b)}`);
    }
  });
}
