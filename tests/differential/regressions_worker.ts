// A worker for tests/differential/regressions_test.ts: computes exported programs' own heaps
// (lib/export/_harness_heap.ts), which once looped for ever, so that the test can stop it and
// fail after a timeout instead of hanging. It answers each message with what it computed.
/// <reference lib="deno.worker" />
import { harnessBlocks, harnessMajorHeap } from "../../lib/export/_harness_heap.ts";
import { exportOCaml } from "../../lib/export/mod.ts";
import harnessHeapSlices from "./regressions/harness_heap_slices.ts";

/** What the test asks: one harness, the regression scenario's export, or a sweep of harnesses. */
export type HarnessHeapRequest =
  | { readonly kind: "harness"; readonly sites: readonly number[]; readonly minor: number }
  | { readonly kind: "export" }
  | { readonly kind: "sweep"; readonly cases: number; readonly seed: number };

/** The answer: the work ahead of each harness computed, or what went wrong. */
export type HarnessHeapAnswer =
  | { readonly workAhead: readonly number[]; readonly error?: undefined }
  | { readonly error: string };

function harness(sites: readonly number[], minor: number, threadsLibrary = false): number {
  const blocks = harnessBlocks(
    { domains: 1, maxDepth: 1, profiles: 1, exceptions: 0, sites },
    [],
    { threadsLibrary },
  );
  return harnessMajorHeap(blocks, minor, { threadsLibrary }).workAhead;
}

function answer(req: HarnessHeapRequest): HarnessHeapAnswer {
  switch (req.kind) {
    case "harness":
      return { workAhead: [harness(req.sites, req.minor)] };
    case "export":
      return { workAhead: [exportOCaml(harnessHeapSlices).majorHeap.workAhead] };
    case "sweep": {
      // Minor heaps of 4,096 words to 2M, up to five keep sites of 1 to 300,000 slots.
      let state = req.seed >>> 0;
      const next = () => {
        state = (Math.imul(state, 1103515245) + 12345) >>> 0;
        return state / 2 ** 32;
      };
      const out: number[] = [];
      for (let c = 0; c < req.cases; c++) {
        const minor = 4096 * 2 ** Math.floor(next() * 10);
        const sites = Array.from(
          { length: Math.floor(next() * 6) },
          () => Math.floor(10 ** (next() * 5.5)) + 1,
        );
        out.push(harness(sites, minor, next() < 0.3));
      }
      return { workAhead: out };
    }
  }
}

self.onmessage = (e: MessageEvent<HarnessHeapRequest>) => {
  let reply: HarnessHeapAnswer;
  try {
    reply = answer(e.data);
  } catch (err) {
    reply = { error: String(err) };
  }
  self.postMessage(reply);
};
