/*
 * memprof-lab trace report: the page's script. It runs after the selection functions of
 * lib/trace_analysis/_select.js and the intervals of _interval.js (inlined before it), reads the profile embedded in
 * #profile-data, and redraws every view whenever a filter changes.
 */
(async function () {
  "use strict";
  // The profile: JSON and the rows' bytes, each gzipped and base64-encoded (see
  // report/build.ts and _row_bytes.js).
  const inflate = (id) => {
    const raw = atob(document.getElementById(id).textContent.trim());
    const gz = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) gz[i] = raw.charCodeAt(i);
    const ds = new DecompressionStream("gzip");
    const writer = ds.writable.getWriter();
    writer.write(gz);
    writer.close();
    return new Response(ds.readable).arrayBuffer();
  };
  const [jsonBytes, rowBytes] = await Promise.all([
    inflate("profile-data"),
    inflate("profile-rows"),
  ]);
  const packed = JSON.parse(new TextDecoder().decode(jsonBytes));
  const data = unpackProfile(
    packed,
    unpackRows(decodeRowBytes(rowBytes, packed.rows.count, packed.rows.widths)),
  );
  const bps = bytesPerSample(data);
  const nb = data.grid.buckets;
  const widthUs = data.grid.widthUs;
  const SOURCE_NAMES = ["minor", "major", "external"];
  const $ = (id) => document.getElementById(id);

  // ---- formatting ----
  function fmtBytes(b) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let v = Math.abs(b), u = 0;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return (b < 0 ? "-" : "") + (u === 0 ? String(Math.round(v)) : v.toFixed(1)) + " " + units[u];
  }
  function fmtSeconds(us) {
    return (us / 1e6).toFixed(6).replace(/\.?0+$/, "") + " s";
  }
  function fmtShare(x) {
    return (x * 100).toFixed(1) + "%";
  }
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    if (attrs) { for (const k in attrs) e.setAttribute(k, attrs[k]); }
    if (text !== undefined) e.textContent = text;
    return e;
  }
  const bucketStartUs = (k) => k * widthUs;
  const bucketLastUs = (k) => (k + 1) * widthUs - 1;

  // ---- static structure: children of function-path nodes ----
  const fnParent = data.fnodes.parent, fnFn = data.fnodes.fn;
  const children = fnParent.map(() => []);
  const roots = [];
  for (let i = 0; i < fnParent.length; i++) {
    if (fnParent[i] < 0) roots.push(i);
    else children[fnParent[i]].push(i);
  }
  const byName = (x, y) => {
    const a = data.functions[fnFn[x]], b = data.functions[fnFn[y]];
    return a < b ? -1 : a > b ? 1 : 0;
  };
  roots.sort(byName);
  for (const c of children) c.sort(byName);

  // ---- state ----
  const state = {
    confidence: 0.95,
    by: "site",
    sortColumn: null,
    sortDesc: true,
    zoom: -1,
    focus: -1,
  };

  function selector() {
    const num = (id) => {
      const v = $(id).value.trim();
      return v === "" || !Number.isFinite(Number(v)) ? null : Number(v);
    };
    const from = Number($("f-from").value), to = Number($("f-to").value);
    const live = $("f-live").value;
    const domain = $("f-domain").value, source = $("f-source").value;
    return {
      domains: domain === "" ? null : [Number(domain)],
      sources: source === "" ? null : [Number(source)],
      sizeMin: num("f-size-min"),
      sizeMax: num("f-size-max"),
      fn: $("f-function").value || null,
      exclude: $("f-exclude").value || null,
      fromBucket: from > 0 ? from : null,
      toBucket: to < nb - 1 ? to : null,
      live,
      liveBucket: live === "bucket" ? Number($("f-live-t").value) : null,
    };
  }

  // ---- intervals (memprof's model: samples ~ Binomial(words, rate); see _interval.js) ----
  const RATE = data.info.sampleRate;
  const HAS_INTERVALS = RATE > 0 && RATE <= 1;
  const wordBytes = data.info.wordSize / 8;
  const intervalCache = new Map();
  /** The exact interval of the bytes `samples` samples estimate, or null (a rate of 0). */
  function interval(samples) {
    if (!HAS_INTERVALS || !Number.isInteger(samples) || samples < 0) return null;
    const key = samples + "/" + state.confidence;
    let r = intervalCache.get(key);
    if (r === undefined) {
      const [lo, hi] = wordsInterval(samples, RATE, state.confidence);
      r = [lo * wordBytes, hi * wordBytes];
      intervalCache.set(key, r);
    }
    return r;
  }
  const fmtConfidence = () => `${+(state.confidence * 100).toFixed(4)}%`;
  function fmtInterval(iv) {
    return iv === null ? "—" : `${fmtBytes(iv[0])}–${fmtBytes(iv[1])}`;
  }

  // ---- info panel ----
  function renderInfo() {
    const i = data.info, s = data.stats;
    const rows = [
      ["executable", i.executableName],
      ["host", i.hostName],
      ["pid", String(i.pid)],
      ["started", new Date(i.startTime / 1000).toISOString()],
      ["context", i.context === null ? "—" : i.context],
      ["runtime params", i.ocamlRuntimeParams || "—"],
      ["sample rate", String(i.sampleRate)],
      ["word size", i.wordSize + " bits"],
      ["1 sample ≈", fmtBytes(bps)],
      ["trace size", fmtBytes(i.sizeBytes)],
      ["events", String(s.events)],
      [
        "allocations",
        `${
          s.allocations.minor + s.allocations.major + s.allocations.external
        } (minor ${s.allocations.minor}, major ${s.allocations.major}, external ${s.allocations.external})`,
      ],
      ["samples", String(s.samples)],
      [
        "allocated",
        `${fmtBytes(s.samples * bps)} (${fmtConfidence()} interval ${
          fmtInterval(interval(s.samples))
        })`,
      ],
      ["promotions", String(s.promotions)],
      ["collections", String(s.collections)],
      ["duration", fmtSeconds(s.durationUs)],
      // The ids of the domains that wrote events (not a count): "1 (id 0)".
      [
        "domains",
        s.domains.length === 0
          ? "none"
          : `${s.domains.length} (${s.domains.length === 1 ? "id" : "ids"} ${
            s.domains.join(", ")
          })`,
      ],
      [
        "peak live",
        data.peak === null
          ? "—"
          : `${fmtBytes(data.peak.samples * bps)} at ${fmtSeconds(data.peak.timeUs)}`,
      ],
      ["time grid", `${nb} × ${fmtSeconds(widthUs)}`],
    ];
    if (s.unmatchedPromotes + s.unmatchedCollects > 0) {
      rows.push(["unmatched", `${s.unmatchedPromotes} promotes, ${s.unmatchedCollects} collects`]);
    }
    const dl = $("info-list");
    dl.replaceChildren();
    for (const [k, v] of rows) {
      dl.appendChild(el("dt", null, k));
      dl.appendChild(el("dd", null, v));
    }
  }

  // ---- filters ----
  function setupFilters() {
    for (const id of ["f-from", "f-to", "f-live-t"]) {
      $(id).max = String(Math.max(0, nb - 1));
    }
    $("f-to").value = String(Math.max(0, nb - 1));
    $("f-live-t").value = String(data.peak === null ? Math.max(0, nb - 1) : data.peak.bucket);
    for (const d of data.stats.domains) {
      $("f-domain").appendChild(el("option", { value: String(d) }, "domain " + d));
    }
    const inputs = document.querySelectorAll(".filters input, .filters select");
    for (const input of inputs) {
      input.addEventListener("input", onFilter);
      input.addEventListener("change", onFilter);
    }
    $("f-reset").addEventListener("click", () => {
      for (const input of inputs) {
        if (input.tagName === "SELECT") input.selectedIndex = 0;
        else if (input.type !== "range") input.value = "";
      }
      $("f-from").value = "0";
      $("f-to").value = String(Math.max(0, nb - 1));
      state.zoom = -1;
      onFilter();
    });
  }
  function onFilter(ev) {
    if (ev && ev.target && ev.target.id === "f-live-t") $("f-live").value = "bucket";
    const from = Number($("f-from").value), to = Number($("f-to").value);
    if (from > to) {
      if (ev && ev.target && ev.target.id === "f-from") $("f-to").value = String(from);
      else $("f-from").value = String(to);
    }
    schedule();
  }
  let pending = false;
  function schedule() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      render();
    });
  }

  // ---- the live-heap chart ----
  const BYTE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];
  /** Multiples of a round step (1, 2 or 5 times a power of ten, in units of `unit`) from 0
   * up to the first one at or above `max`: about `count` intervals. */
  function niceTicks(max, unit, count) {
    if (!(max > 0) || !Number.isFinite(max)) return [0];
    const raw = max / unit / count;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const m = raw / p;
    const step = (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p * unit;
    const ticks = [0];
    while (ticks[ticks.length - 1] < max * (1 - 1e-12)) ticks.push(ticks.length * step);
    return ticks;
  }
  const round6 = (v) => String(Number(v.toPrecision(6)));
  /** The byte axis: ticks in one binary unit (the largest the maximum reaches). */
  function byteTicks(maxBytes) {
    let u = 0;
    while (u < BYTE_UNITS.length - 1 && maxBytes >= Math.pow(1024, u + 1)) u++;
    const unit = Math.pow(1024, u);
    return niceTicks(maxBytes, unit, 4).map((b) => ({
      value: b,
      label: b === 0 ? "0" : `${round6(b / unit)} ${BYTE_UNITS[u]}`,
    }));
  }
  /** The time axis (µs since the trace start): ticks in s, ms or µs. */
  function timeTicks(endUs) {
    const [unit, name] = endUs >= 1e6 ? [1e6, "s"] : endUs >= 1e3 ? [1e3, "ms"] : [1, "µs"];
    return niceTicks(endUs, unit, 6).filter((t) => t <= endUs * (1 + 1e-12)).map((t) => ({
      value: t,
      label: t === 0 ? "0" : `${round6(t / unit)} ${name}`,
    }));
  }
  const totalSeries = totalLiveSeries(data);
  function renderChart(sel, mask) {
    const svg = $("chart");
    const W = 1000, H = 200, PAD = 4;
    const series = liveSeries(data, mask, sel.fromBucket, sel.toBucket);
    // The filter's live bytes at each point with their interval: a band (error bars).
    const band = HAS_INTERVALS ? Array.from(series, (v) => interval(Math.round(v))) : null;
    let top = 0;
    for (let k = 0; k < nb; k++) {
      top = Math.max(top, totalSeries[k], series[k], band === null ? 0 : band[k][1] / bps);
    }
    // The vertical axis runs from 0 to its first round value at or above the largest point.
    const yTicks = byteTicks(top * bps);
    const axisTopBytes = yTicks[yTicks.length - 1].value;
    const max = axisTopBytes > 0 ? axisTopBytes / bps : 1;
    // Point k is the live heap at the end of time bucket k: x is proportional to time.
    const endUs = nb * widthUs;
    const xt = (us) => (endUs > 0 ? (us / endUs) * W : 0);
    const x = (k) => xt((k + 1) * widthUs);
    const y = (v) => H - PAD - (v / max) * (H - 2 * PAD);
    const points = (s) =>
      Array.from(s, (v, k) => `${x(k).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    const parts = [];
    for (const t of yTicks) {
      parts.push(
        `<line class="grid" x1="0" x2="${W}" y1="${y(t.value / bps).toFixed(1)}" y2="${
          y(t.value / bps).toFixed(1)
        }" stroke="#e5e7eb" vector-effect="non-scaling-stroke"></line>`,
      );
    }
    const xTicks = nb === 0 ? [] : timeTicks(endUs);
    for (const t of xTicks) {
      parts.push(
        `<line class="tick" x1="${xt(t.value).toFixed(1)}" x2="${xt(t.value).toFixed(1)}" y1="${
          H - 6
        }" y2="${H}" stroke="#5d6773" vector-effect="non-scaling-stroke"></line>`,
      );
    }
    const lo = sel.fromBucket ?? 0, hi = sel.toBucket ?? nb - 1;
    if (lo > 0 || hi < nb - 1) {
      // Allocation times from the start of bucket lo to the end of bucket hi.
      parts.push(
        `<rect x="${xt(bucketStartUs(lo)).toFixed(1)}" y="0" width="${
          Math.max(1, xt(bucketStartUs(hi + 1)) - xt(bucketStartUs(lo))).toFixed(1)
        }" height="${H}" fill="#dbeafe"></rect>`,
      );
    }
    parts.push(
      `<polyline id="live-total" points="${
        points(totalSeries)
      }" fill="none" stroke="#9ca3af" stroke-width="2" vector-effect="non-scaling-stroke"></polyline>`,
    );
    if (band !== null && nb > 0) {
      const hiPts = band.map((iv, k) => `${x(k).toFixed(1)},${y(iv[1] / bps).toFixed(1)}`);
      const loPts = band.map((iv, k) => `${x(k).toFixed(1)},${y(iv[0] / bps).toFixed(1)}`);
      parts.push(
        `<polygon id="live-band" points="${
          [...hiPts, ...loPts.reverse()].join(" ")
        }" fill="#2563eb" fill-opacity="0.18" stroke="none"></polygon>`,
      );
    }
    parts.push(
      `<polyline id="live-filter" points="${
        points(series)
      }" fill="none" stroke="#2563eb" stroke-width="2" vector-effect="non-scaling-stroke"></polyline>`,
    );
    if (data.peak !== null) {
      const px = x(data.peak.bucket), py = y(data.peak.samples);
      parts.push(
        `<line x1="${px.toFixed(1)}" x2="${
          px.toFixed(1)
        }" y1="0" y2="${H}" stroke="#dc2626" stroke-dasharray="4 3" vector-effect="non-scaling-stroke"></line>`,
      );
      parts.push(
        `<circle id="peak-marker" cx="${px.toFixed(1)}" cy="${
          py.toFixed(1)
        }" r="5" fill="#dc2626"></circle>`,
      );
    }
    const liveK = sel.live === "bucket"
      ? sel.liveBucket
      : sel.live === "peak" && data.peak !== null
      ? data.peak.bucket
      : sel.live === "end"
      ? nb - 1
      : null;
    if (liveK !== null && liveK >= 0) {
      parts.push(
        `<line id="live-at-marker" x1="${x(liveK).toFixed(1)}" x2="${
          x(liveK).toFixed(1)
        }" y1="0" y2="${H}" stroke="#111827" stroke-width="1.5" vector-effect="non-scaling-stroke"></line>`,
      );
    }
    svg.innerHTML = parts.join("");
    const axis = (id, ticks, place) => {
      const box = $(id);
      box.replaceChildren();
      for (const t of ticks) {
        const tick = el("span", { class: "tick", "data-value": String(t.value) }, t.label);
        tick.style[place[0]] = place[1](t.value).toFixed(2) + "%";
        box.appendChild(tick);
      }
    };
    axis("chart-y", yTicks, ["top", (b) => (y(b / bps) / H) * 100]);
    axis("chart-x", xTicks, ["left", (us) => (xt(us) / W) * 100]);
    svg.dataset.axisTopBytes = String(axisTopBytes);
    svg.dataset.axisEndUs = String(endUs);
    let last = 0, smax = 0;
    for (let k = 0; k < nb; k++) smax = Math.max(smax, series[k]);
    if (nb > 0) last = series[nb - 1];
    svg.dataset.filterMaxBytes = String(smax * bps);
    svg.dataset.filterLastBytes = String(last * bps);
    svg.dataset.totalMaxBytes = String((data.peak ? data.peak.samples : 0) * bps);
    $("chart-scale").textContent = `— the filter's largest: ${fmtBytes(smax * bps)}`;
  }
  function setupChart() {
    $("chart").addEventListener("click", (ev) => {
      if (nb === 0) return;
      const r = $("chart").getBoundingClientRect();
      // The nearest point: point k stands at the end of bucket k.
      const k = Math.round(((ev.clientX - r.left) / r.width) * nb) - 1;
      $("f-live-t").value = String(Math.max(0, Math.min(nb - 1, k)));
      $("f-live").value = "bucket";
      schedule();
    });
  }

  // ---- flame graph and icicles ----
  const hue = (name) => {
    let h = 0;
    for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) | 0;
    return h;
  };
  function color(name) {
    const h = hue(name);
    return `hsl(${20 + (Math.abs(h) % 40)}, ${70 + (Math.abs(h >> 8) % 20)}%, ${
      62 + (Math.abs(h >> 16) % 14)
    }%)`;
  }
  const ROW = 18;
  const escapeHtml = (t) =>
    t.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  /** Lays out a tree as boxes: `kids(n)` gives children, `value(n)` the weight, `fnOf(n)` the
   * function; `up` draws the root at the bottom (a flame graph), otherwise at the top. Boxes
   * narrower than a pixel are left out. Clicks reach `onClick` / `onDouble` with the node. */
  function drawTree(container, root, kids, value, fnOf, up, onClick, onDouble) {
    const W = container.clientWidth || 800;
    const total = value(root);
    const boxes = [];
    let maxDepth = 0;
    if (total > 0) {
      const stack = [[root, 0, 0]];
      while (stack.length > 0) {
        const [n, x0, depth] = stack.pop();
        const w = value(n) / total;
        if (w * W < 1) continue;
        boxes.push([n, x0, w, depth]);
        if (depth > maxDepth) maxDepth = depth;
        let x = x0;
        for (const c of kids(n)) {
          const cw = value(c) / total;
          if (cw * W >= 1) stack.push([c, x, depth + 1]);
          x += cw;
        }
      }
    }
    const html = [];
    for (let i = 0; i < boxes.length; i++) {
      const [n, x0, w, depth] = boxes[i];
      const fn = fnOf(n);
      const name = fn < 0 ? "all" : data.functions[fn];
      const top = (up ? maxDepth - depth : depth) * ROW;
      html.push(
        `<div class="box${
          fn >= 0 && fn === state.focus ? " focus" : ""
        }" data-i="${i}" data-fn="${fn}" data-bytes="${value(n) * bps}" style="left:${
          (x0 * 100).toFixed(4)
        }%;width:${(w * 100).toFixed(4)}%;top:${top}px;background:${
          fn < 0 ? "#e5e7eb" : color(name)
        }">${escapeHtml(name)}</div>`,
      );
    }
    container.innerHTML = html.join("");
    container.style.height = ((maxDepth + 1) * ROW + 2) + "px";
    container.dataset.boxes = String(boxes.length);
    container.dataset.totalBytes = String(total * bps);
    const nodeOf = (ev) => {
      const b = ev.target.closest(".box");
      return b === null ? undefined : boxes[Number(b.dataset.i)];
    };
    container.onclick = (ev) => {
      const b = nodeOf(ev);
      if (b) onClick(b[0]);
    };
    container.ondblclick = (ev) => {
      const b = nodeOf(ev);
      if (b && onDouble) onDouble(b[0]);
    };
    container.onmouseover = (ev) => {
      const b = nodeOf(ev);
      if (!b || ev.target.title) return;
      const fn = fnOf(b[0]);
      ev.target.title = `${fn < 0 ? "all" : data.functions[fn]}\n${fmtBytes(value(b[0]) * bps)} (${
        fmtShare(b[2])
      } of view)`;
    };
  }

  function renderFlame(weights) {
    const ROOT = -1;
    const kids = (n) => (n === ROOT ? roots : children[n]);
    const value = (n) => (n === ROOT ? weights.rootTotal : weights.total[n]);
    const fnOf = (n) => (n === ROOT ? -1 : fnFn[n]);
    if (state.zoom >= 0 && weights.total[state.zoom] === 0) state.zoom = ROOT;
    drawTree(
      $("flame"),
      state.zoom,
      kids,
      value,
      fnOf,
      true,
      (n) => {
        state.zoom = n;
        schedule();
      },
      (n) => {
        if (n !== ROOT) setFocus(fnFn[n]);
      },
    );
    // The flame graph's root is at its bottom: scrolled there at the next frame, when the page is
    // laid out anyway (reading its height now would lay it out once more).
    requestAnimationFrame(() => {
      const scroller = $("flame-scroll");
      scroller.scrollTop = scroller.scrollHeight;
    });
    // Breadcrumbs of the zoomed node.
    const crumbs = $("flame-path");
    crumbs.replaceChildren();
    const path = [];
    for (let n = state.zoom; n >= 0; n = fnParent[n]) path.push(n);
    path.push(ROOT);
    path.reverse();
    path.forEach((n, i) => {
      if (i > 0) crumbs.appendChild(document.createTextNode(" › "));
      const a = el("a", null, n === ROOT ? "all" : data.functions[fnFn[n]]);
      a.addEventListener("click", () => {
        state.zoom = n;
        schedule();
      });
      crumbs.appendChild(a);
    });
  }

  function setFocus(fn) {
    state.focus = fn;
    schedule();
  }

  function renderFocus(sel) {
    const name = state.focus < 0 ? "—" : data.functions[state.focus];
    $("focus-name").textContent = name;
    $("focus-panel").dataset.focus = name;
    if (state.focus < 0) {
      for (const id of ["icicle-callees", "icicle-callers"]) {
        $(id).replaceChildren(
          el(
            "p",
            { class: "note" },
            "Double-click a frame or click a function in the table to focus on it.",
          ),
        );
        $(id).dataset.totalBytes = "0";
        $(id).style.height = "";
      }
      return;
    }
    const trees = callTrees(data, sel, state.focus);
    if (trees.callees.value === 0) {
      // The filters leave no sample of the focused function: say so rather than draw nothing.
      for (const id of ["icicle-callees", "icicle-callers"]) {
        $(id).replaceChildren(
          el(
            "p",
            { class: "note empty" },
            `No samples of ${name} under the current filters: change or reset the filters, ` +
              "or focus on another function.",
          ),
        );
        $(id).dataset.totalBytes = "0";
        $(id).dataset.boxes = "0";
        $(id).style.height = "";
      }
      return;
    }
    const kidsOf = (t) =>
      [...t.children.values()].sort((x, y) => {
        const a = data.functions[x.fn], b = data.functions[y.fn];
        return a < b ? -1 : a > b ? 1 : 0;
      });
    const refocus = (t) => setFocus(t.fn);
    for (
      const [id, tree] of [["icicle-callees", trees.callees], ["icicle-callers", trees.callers]]
    ) {
      drawTree($(id), tree, kidsOf, (t) => t.value, (t) => t.fn, false, refocus);
    }
  }

  // ---- the table ----
  const COLUMNS = {
    site: [
      ["key", "site"],
      ["samples", "samples"],
      ["bytes", "bytes"],
      ["interval", "interval"],
      ["liveEndBytes", "live@end"],
      ["promotedShare", "promoted"],
    ],
    stack: [
      ["key", "stack"],
      ["samples", "samples"],
      ["bytes", "bytes"],
      ["interval", "interval"],
      ["liveEndBytes", "live@end"],
      ["promotedShare", "promoted"],
    ],
    function: [
      ["key", "function"],
      ["samples", "samples"],
      ["selfBytes", "self"],
      ["bytes", "total"],
      ["interval", "interval"],
      ["liveEndBytes", "live@end"],
      ["promotedShare", "promoted"],
    ],
  };
  const TABLE_LIMIT = 200;
  /** The samples the current sort compares, when it is by an estimate (else null). */
  function sortedSamples(by) {
    const c = state.sortColumn;
    if (c === null) return by === "function" ? "selfSamples" : "samples";
    if (c === "samples" || c === "bytes") return "samples";
    if (c === "selfBytes") return "selfSamples";
    return null;
  }
  function renderTable(sel, selection) {
    const by = state.by;
    const groups = sortGroups(groupBy(data, selection, by), by);
    // The figures of every group, but the key (a stack's text) only for the rows shown.
    let rows = groups.map((g) => ({
      group: g,
      key: "",
      samples: g.samples,
      bytes: g.samples * bps,
      liveEndBytes: g.liveEnd * bps,
      promotedSamples: g.promoted,
      promotedShare: g.samples > 0 ? g.promoted / g.samples : 0,
      selfSamples: g.self,
      selfBytes: g.self * bps,
    }));
    if (state.sortColumn !== null) {
      const c = state.sortColumn, d = state.sortDesc ? -1 : 1;
      rows = rows.slice().sort((x, y) => {
        const r = c === "key" ? compareGroupKeys(x.group, y.group) : x[c] - y[c];
        return d * r || compareGroupKeys(x.group, y.group);
      });
    }
    const shown = rows.slice(0, TABLE_LIMIT);
    for (const r of shown) {
      r.key = r.group.key;
      const iv = interval(r.samples);
      r.bytesLow = iv === null ? null : iv[0];
      r.bytesHigh = iv === null ? null : iv[1];
    }
    // Adjacent rows whose order sampling does not establish: the exact test that a row stands
    // for no more than the next (same trace, same rate), Benjamini-Hochberg over the rows shown.
    const field = sortedSamples(by);
    if (HAS_INTERVALS && field !== null && shown.length > 1) {
      const ps = shown.slice(0, -1).map((r, i) =>
        rateTestPValue(shown[i + 1][field], r[field], RATE, RATE)
      );
      const qs = benjaminiHochberg(ps);
      for (let i = 0; i < shown.length - 1; i++) {
        shown[i].tieQ = qs[i];
        shown[i].tie = !(qs[i] <= 1 - state.confidence);
      }
    }
    // Measuring live at the end, bytes are live@end bytes: that column would repeat them.
    // Live at the peak or at T, it says how much of what was live then is still live at the end.
    const cols = sel.live === "end"
      ? COLUMNS[by].filter(([field]) => field !== "liveEndBytes")
      : sel.live === "alloc"
      ? COLUMNS[by]
      : COLUMNS[by].map((c) => (c[0] === "liveEndBytes" ? [c[0], "of which live@end"] : c));
    const measure = sel.live === "alloc" ? "allocated" : "live";
    const thead = $("table").tHead;
    thead.replaceChildren();
    const hr = el("tr");
    for (const [field, label] of cols) {
      const text = field === "bytes" && by !== "function"
        ? measure
        : field === "interval"
        ? `${fmtConfidence()} interval${by === "function" ? " of total" : ""}`
        : label;
      const th = el("th", { class: field === "key" ? "key" : "", "data-column": field }, text);
      if (field === "liveEndBytes") {
        th.title = sel.live === "alloc"
          ? "bytes of these allocations still live at the end of the trace"
          : "bytes of the objects live then that are still live at the end of the trace";
      }
      if (field === "interval") {
        th.title = "exact binomial confidence interval of the bytes (each word sampled with " +
          "probability the sample rate), drawn as an error bar; ≈: not significantly more " +
          "than the next row";
        hr.appendChild(th);
        continue;
      }
      if (state.sortColumn === field) th.textContent += state.sortDesc ? " ▼" : " ▲";
      th.addEventListener("click", () => {
        if (state.sortColumn === field) state.sortDesc = !state.sortDesc;
        else {
          state.sortColumn = field;
          state.sortDesc = field !== "key";
        }
        schedule();
      });
      hr.appendChild(th);
    }
    thead.appendChild(hr);
    const cell = (field, r) => {
      if (field === "key") {
        const td = el("td", { class: "key" });
        if (by === "function") {
          const a = el("a", null, r.key);
          a.title = "focus on this function";
          a.addEventListener("click", () => setFocus(data.functions.indexOf(r.key)));
          td.appendChild(a);
        } else td.textContent = r.key;
        return td;
      }
      if (field === "samples") return el("td", null, String(r.samples));
      if (field === "interval") return intervalCell(r);
      if (field === "promotedShare") return el("td", null, fmtShare(r.promotedShare));
      return el("td", null, fmtBytes(r[field]));
    };
    // Error bars share one scale: the largest upper bound shown (the total's with the total).
    let scale = 0;
    for (const r of shown) scale = Math.max(scale, r.bytesHigh ?? r.bytes);
    const intervalCell = (r) => {
      const td = el("td", { class: "ci" });
      if (r.bytesLow === null || r.bytesLow === undefined) {
        td.textContent = "—";
        return td;
      }
      const pc = (v) => `${(scale > 0 ? Math.min(100, (100 * v) / scale) : 0).toFixed(2)}%`;
      const bar = el("span", { class: "ebar", "aria-hidden": "true" });
      bar.appendChild(el("span", { class: "ebar-fill", style: `width:${pc(r.bytes)}` }));
      bar.appendChild(
        el("span", {
          class: "ebar-whisker",
          style: `left:${pc(r.bytesLow)};width:${pc(r.bytesHigh - r.bytesLow)}`,
        }),
      );
      td.appendChild(bar);
      td.appendChild(el("span", { class: "ci-text" }, fmtInterval([r.bytesLow, r.bytesHigh])));
      if (r.tie) {
        const m = el("span", { class: "tie" }, "≈");
        m.title = `not significantly more than the next row in ${
          field === "selfSamples" ? "self" : "samples"
        } (q = ${r.tieQ.toPrecision(2)})`;
        td.appendChild(m);
      }
      return td;
    };
    const body = document.createDocumentFragment();
    for (const r of shown) {
      const tr = el("tr");
      tr.dataset.key = r.key;
      tr.dataset.samples = String(r.samples);
      tr.dataset.bytes = String(r.bytes);
      tr.dataset.liveEndBytes = String(r.liveEndBytes);
      tr.dataset.promotedShare = String(r.promotedShare);
      if (r.bytesLow !== null) {
        tr.dataset.bytesLow = String(r.bytesLow);
        tr.dataset.bytesHigh = String(r.bytesHigh);
      }
      if (r.tie !== undefined) tr.dataset.tie = r.tie ? "1" : "0";
      if (by === "function") {
        tr.dataset.selfSamples = String(r.selfSamples);
        tr.dataset.selfBytes = String(r.selfBytes);
      }
      for (const [field] of cols) tr.appendChild(cell(field, r));
      body.appendChild(tr);
    }
    $("table").tBodies[0].replaceChildren(body);
    const t = selectionTotals(selection);
    const totalIv = interval(t.samples);
    const totals = {
      key: "(total)",
      bytesLow: totalIv === null ? null : totalIv[0],
      bytesHigh: totalIv === null ? null : totalIv[1],
      samples: t.samples,
      bytes: t.samples * bps,
      liveEndBytes: t.liveEnd * bps,
      promotedShare: t.samples > 0 ? t.promoted / t.samples : 0,
      selfBytes: t.samples * bps,
    };
    const foot = el("tr", { id: "totals" });
    foot.dataset.samples = String(totals.samples);
    foot.dataset.bytes = String(totals.bytes);
    foot.dataset.liveEndBytes = String(totals.liveEndBytes);
    foot.dataset.promotedShare = String(totals.promotedShare);
    for (const [field] of cols) {
      foot.appendChild(
        field === "key"
          ? el("td", { class: "key" }, "(total)")
          : field === "selfBytes"
          ? el("td")
          : field === "interval"
          ? el("td", { class: "ci" }, fmtInterval(totalIv))
          : cell(field, totals),
      );
    }
    $("table").tFoot.replaceChildren(foot);
    $("table").dataset.rowCount = String(rows.length);
    $("table-note").textContent =
      `${rows.length} ${by === "site" ? "sites" : by === "function" ? "functions" : "stacks"}${
        rows.length > TABLE_LIMIT ? `, first ${TABLE_LIMIT} shown` : ""
      }. ` +
      (by === "function"
        ? "Total: stacks containing the function; self: stacks where it is innermost. "
        : "") +
      (sel.live === "alloc"
        ? "live@end: the part of those allocations still live at the end of the trace."
        : sel.live === "end"
        ? "Measuring objects live at the end: their bytes are the live@end bytes."
        : "of which live@end: the part of the objects live then still live at the end.") +
      ` Interval: the ${fmtConfidence()} exact binomial confidence interval of the bytes ` +
      "(error bar; the bar is the estimate); ≈: the row is not significantly more than the next " +
      "(exact test, Benjamini-Hochberg over the rows shown).";
  }
  function setupTable() {
    $("table-confidence").addEventListener("change", () => {
      state.confidence = Number($("table-confidence").value);
      renderInfo();
      schedule();
    });
    $("table-by").addEventListener("change", () => {
      state.by = $("table-by").value;
      state.sortColumn = null;
      schedule();
    });
  }

  // ---- everything ----
  function describe(sel) {
    const lo = sel.fromBucket ?? 0, hi = sel.toBucket ?? nb - 1;
    $("f-from-value").textContent = nb === 0 ? "—" : fmtSeconds(bucketStartUs(lo));
    $("f-to-value").textContent = nb === 0 ? "—" : fmtSeconds(bucketLastUs(hi) + 1);
    $("f-live-t-value").textContent = nb === 0
      ? "—"
      : fmtSeconds(bucketLastUs(Number($("f-live-t").value)));
    const parts = [];
    parts.push(
      sel.live === "alloc"
        ? "allocations"
        : sel.live === "end"
        ? "live at the end"
        : sel.live === "peak"
        ? "live at the peak"
        : `live at ${fmtSeconds(bucketLastUs(sel.liveBucket))}`,
    );
    if (sel.fromBucket !== null || sel.toBucket !== null) {
      parts.push(
        `allocated in [${fmtSeconds(bucketStartUs(lo))}, ${fmtSeconds(bucketLastUs(hi) + 1)})`,
      );
    }
    if (sel.domains) parts.push("domain " + sel.domains.join(","));
    if (sel.sources) parts.push(sel.sources.map((s) => SOURCE_NAMES[s]).join(","));
    if (sel.sizeMin !== null || sel.sizeMax !== null) {
      parts.push(`size ${sel.sizeMin ?? ""}..${sel.sizeMax ?? ""} words`);
    }
    if (sel.fn) parts.push(`with “${sel.fn}”`);
    if (sel.exclude) parts.push(`without “${sel.exclude}”`);
    $("selection").textContent = parts.join("; ");
  }

  function render() {
    const sel = selector();
    describe(sel);
    const mask = classMask(data, sel);
    const selection = selectSamples(data, sel);
    renderChart(sel, mask);
    renderFlame(flameWeights(data, selection));
    renderFocus(selection);
    renderTable(sel, selection);
    document.body.dataset.renders = String(Number(document.body.dataset.renders || "0") + 1);
  }

  renderInfo();
  setupFilters();
  setupChart();
  setupTable();
  $("flame-reset").addEventListener("click", () => {
    state.zoom = -1;
    schedule();
  });
  render();
  // Drawn: after the first frame that shows the views (laid out and painted), not merely after
  // the script that builds them.
  requestAnimationFrame(() =>
    setTimeout(() => {
      performance.mark("report-rendered");
      document.body.dataset.ready = "1";
    }, 0)
  );
})();
