// The curated entry points (issue 26): runtime_events and trace_analysis export what a user of
// the entry point needs; ring-layout and selection internals stay in their files.
import assert from "node:assert/strict";
import * as runtimeEvents from "../../lib/runtime_events/mod.ts";
import * as traceAnalysis from "../../lib/trace_analysis/mod.ts";

Deno.test("runtime_events does not export ring-layout and printing internals", () => {
  for (
    const internal of [
      "packHeader",
      "unpackHeader",
      "unpackHeaderHigh",
      "headerHigh",
      "computeLayout",
      "readMetadataHeader",
      "RING_HEADER_SIZE",
      "RuntimeMessageType",
      "dumpCallbacks",
      "hexBytes",
      "ocamlHexFloat",
      "processAlive",
    ]
  ) {
    assert.ok(!(internal in runtimeEvents), internal);
  }
  for (
    const needed of [
      "RuntimeEventsProducer",
      "RuntimeEventsCursor",
      "DecoderRegistry",
      "Type",
      "customType",
      "dumpImage",
      "computeStats",
      "computeGcStats",
      "exportChromeTrace",
      "watchRing",
      "RuntimePhase",
      "phaseName",
    ]
  ) {
    assert.ok(needed in runtimeEvents, needed);
  }
});

Deno.test("trace_analysis does not export selection and packing internals", () => {
  for (
    const internal of [
      "packProfile",
      "unpackProfile",
      "selectSamples",
      "stackOrder",
      "parseDomains",
      "checkFilter",
      "startAggregate",
      "formatBytes",
    ]
  ) {
    assert.ok(!(internal in traceAnalysis), internal);
  }
  for (
    const needed of [
      "aggregateTrace",
      "analyzeTrace",
      "startAnalysis",
      "topOf",
      "diffOf",
      "foldedStacks",
      "speedscopeOf",
      "pprofOf",
      "buildReport",
    ]
  ) {
    assert.ok(needed in traceAnalysis, needed);
  }
});
