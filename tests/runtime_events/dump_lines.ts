/**
 * Parses the text dumps made by OCaml's own consumer (`dump.txt` of the ring
 * fixtures), so that tests can compute figures from them without going
 * through our binary reader.
 *
 * @module
 */

/** One line of a dump. */
export interface DumpLine {
  ring: number;
  /** Timestamp in ns (absent on lost_events lines). */
  ts: bigint | null;
  kind: "begin" | "end" | "counter" | "alloc" | "lifecycle" | "lost" | "user";
  /** Phase, counter, lifecycle or user event name (without quotes). */
  name: string;
  /** What follows the name: the counter value, `span begin`, `int 42`, ... */
  rest: string;
}

/** Parses every line of `text` (throws on a line it does not recognise). */
export function parseDump(text: string): DumpLine[] {
  const out: DumpLine[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    let m = /^(\d+) lost_events (\d+)$/.exec(line);
    if (m) {
      out.push({ ring: +m[1], ts: null, kind: "lost", name: "lost_events", rest: m[2] });
      continue;
    }
    m = /^(\d+) (\d+) (begin|end|counter|alloc|lifecycle) (\S+)(?: (.*))?$/.exec(line);
    if (m) {
      out.push({
        ring: +m[1],
        ts: BigInt(m[2]),
        kind: m[3] as DumpLine["kind"],
        name: m[4],
        rest: m[5] ?? "",
      });
      continue;
    }
    m = /^(\d+) (\d+) user "((?:[^"\\]|\\.)*)" (.*)$/.exec(line);
    if (m) {
      out.push({ ring: +m[1], ts: BigInt(m[2]), kind: "user", name: m[3], rest: m[4] });
      continue;
    }
    throw new Error(`unrecognised dump line: ${line}`);
  }
  return out;
}
