/**
 * Pacing: the harness's `doms` array (lib/export/_harness_tables.ts), from rnd-13-1180 of `deno
 * task diff --random 2000 --seed 13`. Its slots hold immediates until `Domain.spawn` returns a
 * handle; the marking layout had them as pointers from the start, so that darkening the array
 * pushed its fields from the second (6 words a cycle for this program's 7 domains, where OCaml
 * 5.3.0 pushes none), and a major cycle ended one iteration early. A slot now reads the
 * simulation: nothing before the spawn, then the handle `{ domain; term_sync }`, its
 * `term_sync` (`{ state; mut; cond }`, with the mutex and condition) and, once the domain ended,
 * `Finished (Ok ())`, which marking reached only as pointers it skipped (17 words a cycle per
 * spawned domain less than OCaml's); a living domain's `term_sync` is a global root of the
 * runtime (caml_domain_spawn registers it), darkened when a cycle starts.
 */
import { act, cb, keep, scenario, sizes } from "../../../lib/scenario/mod.ts";

export default scenario(
  { "name": "domain_slots_marked", "seed": 901824, "minorHeapWords": 8192 },
  (s) => {
    const m = s.main;
    m.memprof.start({
      name: "p1",
      samplingRate: 0.001,
      callstackSize: 64,
      tracker: {
        allocMajor: cb.track().every(2, act.raise("Boom"), 2).on(11, act.stop()).on(
          11,
          act.start({
            name: "p1r",
            samplingRate: 0.01,
            callstackSize: 4,
            tracker: {},
          }),
        ),
        deallocMajor: cb.track().on(2, act.alloc(4)).on(1, act.alloc(11)),
      },
    });
    m.attempt(() => {
      m.poll();
      m.alloc(188, { lifetime: keep.list("c") });
    });
    m.alloc(sizes.choice(13, 5, 2, 23), {
      lifetime: keep.steps(4, "c"),
      at: "Gen.site2@gen.ml:22:4-20",
    });
    m.attempt(() => {
      m.alloc(sizes.choice(20, 8, 181));
      m.alloc(sizes.uniform(6, 24), { at: "Gen.site1@gen.ml:21:4-20" });
    });
    m.repeat(20, () => {
      m.alloc(5, { source: "array", at: "Gen.site8@gen.ml:28:4-20" });
      m.call("Gen.f7@gen.ml:7:2-14", () => {
        m.alloc(sizes.geometric(4, 44), {
          lifetime: keep.list("a"),
          at: "Gen.site3@gen.ml:23:4-20",
        });
        s.release("c");
        m.repeat(5, () => {
          m.minorGc();
          m.alloc(8, { source: "runtime" });
          m.alloc(sizes.choice(21), { at: "Gen.site2@gen.ml:22:4-20" });
        });
      });
    });
    m.call("Gen.f7@gen.ml:7:2-14", () => {
      m.alloc(7, { at: "Gen.site1@gen.ml:21:4-20" });
      m.call("Gen.f2@gen.ml:2:2-14", () => {
        m.minorGc();
      });
      m.repeat(257, () => {
        m.repeat(15, () => {
          s.release("b");
        });
        m.call("Gen.f7@gen.ml:7:2-14", () => {
          m.alloc(2, { at: "Gen.site2@gen.ml:22:4-20" });
          m.alloc(1528, { source: "array", at: "Gen.site7@gen.ml:27:4-20" });
          m.minorGc();
        });
      });
    });
    m.repeat(507, () => {
      m.alloc(8, { at: "Gen.site7@gen.ml:27:4-20" });
    });
    m.alloc(1, { lifetime: keep.cycle(keep.drop, keep.drop), at: "Gen.site4@gen.ml:24:4-20" });
    m.poll();
    m.memprof.stop();
    m.memprof.discard("p1");
    m.memprof.start({
      name: "p2",
      samplingRate: 0.00025,
      callstackSize: 1,
      tracker: {
        promote: cb.track(),
        deallocMajor: cb.track(),
      },
    });
    m.alloc(20, { source: "custom", at: "Gen.site7@gen.ml:27:4-20", customMem: 17390 });
    m.fullMajor();
    m.minorGc();
    m.alloc(8, { source: "array", at: "Gen.site5@gen.ml:25:4-20" });
    m.repeat(8, () => {
      m.repeat(269, () => {
        s.release("a");
      });
    });
    m.alloc(1, { lifetime: keep.until("c") });
    m.poll();
    m.memprof.stop();
    m.memprof.discard("p2");
    m.memprof.start({
      name: "p3",
      samplingRate: 0.01,
      callstackSize: 64,
      tracker: {
        allocMinor: cb.none().on(28, act.raise("Exit")),
        promote: cb.track(),
        deallocMinor: cb.track().every(5, act.raise("Boom"), 3),
        deallocMajor: cb.track(),
      },
    });
    s.release("b");
    m.alloc(7, { at: "Gen.site7@gen.ml:27:4-20" });
    m.alloc(sizes.choice(1), { at: "Gen.site6@gen.ml:26:4-20" });
    m.call("Gen.f1@gen.ml:1:2-14", () => {
      m.call("Gen.f6@gen.ml:6:2-14", () => {
        m.call("Gen.f3@gen.ml:3:2-14", () => {
          m.alloc(13);
          m.alloc(2745, { source: "array", at: "Gen.site3@gen.ml:23:4-20" });
        });
        m.alloc(sizes.uniform(3, 33), { at: "Gen.site1@gen.ml:21:4-20" });
      });
      m.poll();
    });
    m.poll();
    m.memprof.stop();
    m.memprof.discard("p3");
    m.call("Gen.f4@gen.ml:4:2-14", () => {
      m.poll();
      m.attempt(() => {
        m.repeat(325, () => {
          m.alloc(2356, {
            source: "major",
            lifetime: keep.steps(10, "b"),
            at: "Gen.site7@gen.ml:27:4-20",
          });
          m.alloc(sizes.geometric(17, 194), {
            lifetime: keep.until("a"),
            at: "Gen.site5@gen.ml:25:4-20",
          });
        });
        m.alloc(2, { at: "Gen.site1@gen.ml:21:4-20" });
      });
      m.alloc(37, { source: "runtime", at: "Gen.site7@gen.ml:27:4-20" });
    });
    m.fullMajor();
    const w1 = m.spawn("w1");
    w1.memprof.start({
      name: "q1",
      samplingRate: 0.01,
      callstackSize: 64,
      tracker: {
        allocMinor: cb.none(),
        allocMajor: cb.track().on(14, act.raise("Not_found")).every(10, act.raise("Not_found"), 10),
        deallocMinor: cb.track(),
        deallocMajor: cb.none(),
      },
    });
    w1.poll();
    w1.terminate();
    m.fullMajor();
    const w2 = m.spawn("w2");
    w2.alloc(sizes.geometric(19, 46), { at: "Gen.site5@gen.ml:25:4-20" });
    w2.call("Gen.f7@gen.ml:7:2-14", () => {
      w2.alloc(sizes.uniform(5, 37), { at: "Gen.site5@gen.ml:25:4-20" });
    });
    w2.terminate();
    m.fullMajor();
    const w3 = m.spawn("w3");
    w3.memprof.start({
      name: "q3",
      samplingRate: 0.01,
      callstackSize: 10,
      tracker: {
        allocMajor: cb.track().on(10, act.alloc(7)),
        deallocMajor: cb.track().on(30, act.raise("Exit")).on(1, act.alloc(5)),
      },
    });
    w3.alloc(5, { at: "Gen.site7@gen.ml:27:4-20" });
    w3.alloc(sizes.geometric(12, 40));
    w3.repeat(3, () => {
      w3.alloc(56);
      w3.repeat(3, () => {
        w3.alloc(38);
        w3.alloc(sizes.choice(29, 21), { at: "Gen.site5@gen.ml:25:4-20" });
      });
      w3.alloc(46, { at: "Gen.site1@gen.ml:21:4-20" });
    });
    w3.alloc(7);
    m.join(w3);
    m.fullMajor();
    const w4 = m.spawn("w4");
    w4.alloc(sizes.uniform(4, 9), { at: "Gen.site6@gen.ml:26:4-20" });
    w4.call("Gen.f2@gen.ml:2:2-14", () => {
      w4.poll();
    });
    w4.repeat(3, () => {
      w4.alloc(sizes.uniform(16, 17));
      w4.alloc(7, { at: "Gen.site8@gen.ml:28:4-20" });
    });
    w4.repeat(4, () => {
      w4.alloc(sizes.geometric(11, 121));
    });
    m.join(w4);
    m.fullMajor();
    const w5 = m.spawn("w5");
    w5.memprof.start({
      name: "q5",
      samplingRate: 0.01,
      callstackSize: 64,
      tracker: {
        allocMinor: cb.track(),
        promote: cb.track(),
        deallocMinor: cb.track(),
        deallocMajor: cb.none().on(18, act.alloc(6)).every(8, act.alloc(17), 6),
      },
    });
    w5.call("Gen.f6@gen.ml:6:2-14", () => {
      w5.alloc(5, { at: "Gen.site3@gen.ml:23:4-20" });
      w5.alloc(sizes.choice(46, 52, 6, 1, 24), { at: "Gen.site2@gen.ml:22:4-20" });
      w5.call("Gen.f6@gen.ml:6:2-14", () => {
        w5.alloc(2, { at: "Gen.site1@gen.ml:21:4-20" });
      });
    });
    w5.repeat(9, () => {
      w5.alloc(1);
      w5.alloc(56, { at: "Gen.site2@gen.ml:22:4-20" });
    });
    w5.alloc(50, { at: "Gen.site3@gen.ml:23:4-20" });
    w5.alloc(sizes.uniform(16, 19), { at: "Gen.site2@gen.ml:22:4-20" });
    w5.memprof.stop();
    w5.terminate();
    m.fullMajor();
    const w6 = m.spawn("w6");
    w6.memprof.start({
      name: "q6",
      samplingRate: 0.01,
      callstackSize: 2,
      tracker: {
        allocMinor: cb.track().every(3, act.alloc(6), 3).on(5, act.alloc(6)),
        deallocMinor: cb.none(),
        deallocMajor: cb.track(),
      },
    });
    w6.alloc(55, { at: "Gen.site1@gen.ml:21:4-20" });
    w6.attempt(() => {
      w6.alloc(2, { at: "Gen.site4@gen.ml:24:4-20" });
      w6.alloc(3);
      w6.alloc(7, { at: "Gen.site6@gen.ml:26:4-20" });
    });
    w6.call("Gen.f6@gen.ml:6:2-14", () => {
      w6.alloc(sizes.choice(5, 1, 7), { at: "Gen.site1@gen.ml:21:4-20" });
    });
    w6.terminate();
    s.release("a");
    s.release("b");
    s.release("c");
  },
);
