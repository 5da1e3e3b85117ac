// The profile a report page embeds, read back as the page reads it (report/client.js): the
// JSON and the rows' bytes, each gzipped and base64-encoded.
import assert from "node:assert/strict";
import { gunzipSync } from "node:zlib";
import type { ProfileData } from "../../lib/trace_analysis/mod.ts";
import { unpackProfile, unpackRows } from "../../lib/trace_analysis/select.ts";
import { decodeRowBytes } from "../../lib/trace_analysis/_row_bytes.js";

function blob(html: string, id: string, encoding: string): Uint8Array {
  const m = new RegExp(
    `<script type="application/octet-stream" id="${id}" data-encoding="${
      encoding.replace(/\+/g, "\\+")
    }">([A-Za-z0-9+/=]*)</script>`,
  ).exec(html);
  assert.ok(m, `the report embeds ${id}`);
  return new Uint8Array(gunzipSync(Uint8Array.from(atob(m[1]), (c) => c.charCodeAt(0))));
}

/** The profile report page `html` embeds. */
export function embeddedProfile(html: string): ProfileData {
  const packed = JSON.parse(
    new TextDecoder().decode(blob(html, "profile-data", "json+gzip+base64")),
  );
  const bytes = blob(html, "profile-rows", "bytes+gzip+base64");
  return unpackProfile(
    packed,
    unpackRows(decodeRowBytes(bytes.slice().buffer, packed.rows.count, packed.rows.widths)),
  );
}
