/**
 * The trace a writing command reads (`trace copy`, `subsample`, `strip-names`, `export`,
 * `report`): a regular file read as the pass goes, or a pipe or FIFO read ahead asynchronously,
 * so that SIGINT and SIGTERM are handled while it is idle (cli/_io.ts `writeOutput`).
 * @module
 */
import { MAX_PACKET_SIZE, Reader } from "../lib/memtrace/mod.ts";
import { advanceYielding, ReadAhead } from "./_io.ts";

/** Packets read between two looks at the event loop. */
const STEP = 64;

/** An open trace and, for a pipe or FIFO, what reads it ahead. */
export interface TraceInputFile {
  /** The trace. */
  readonly reader: Reader;
  /** Reads a pipe or FIFO ahead; undefined for a regular file. */
  readonly ahead: ReadAhead | undefined;
}

/**
 * Opens trace `input`: standard input for `-` when `stdin` is set; a pipe, FIFO or device read
 * ahead asynchronously (its first packets awaited here); anything else with `Reader.open` (a
 * missing file or a directory fail as they do there).
 */
export async function openTraceInput(
  input: string,
  { stdin = false }: { stdin?: boolean } = {},
): Promise<TraceInputFile> {
  let ahead: ReadAhead | undefined;
  if (stdin && input === "-") ahead = new ReadAhead(Deno.stdin);
  else {
    let special = false;
    try {
      const st = Deno.statSync(input);
      special = !st.isFile && !st.isDirectory;
    } catch { /* Reader.open says why */ }
    if (!special) return { reader: Reader.open(input), ahead: undefined };
    ahead = new ReadAhead(await Deno.open(input));
  }
  try {
    await ahead.fill(3 * MAX_PACKET_SIZE); // the info packet, then the first window of events
    const name = input === "-" && stdin ? "standard input" : input;
    return { reader: Reader.fromStream(ahead, { name }), ahead };
  } catch (e) {
    try {
      ahead.close();
    } catch { /* closed by the reader already */ }
    throw e;
  }
}

/** Runs an iteration over `input` to its end ({@linkcode advanceYielding}), reading a pipe ahead
 * before each step so that the step never waits for data. */
export function readThrough(
  it: { advance(maxPackets: number): boolean },
  input: TraceInputFile,
): Promise<void> {
  const ahead = input.ahead;
  return advanceYielding(
    it,
    STEP,
    ahead === undefined ? undefined : () => ahead.fill((STEP + 2) * MAX_PACKET_SIZE),
  );
}
