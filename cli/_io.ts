/**
 * Small I/O helpers shared by the command-line tools: buffered stdout, atomic file output and
 * uniform error reporting.
 * @module
 */

const encoder = new TextEncoder();

/** Buffers text and writes it to stdout in large chunks (line-by-line writes are slow). */
export class StdoutBuffer {
  private parts: string[] = [];
  private size = 0;

  /** Adds a line (a newline is appended). */
  line(s: string): void {
    this.parts.push(s, "\n");
    this.size += s.length + 1;
    if (this.size > 1 << 16) this.flush();
  }

  /** Writes everything buffered so far. */
  flush(): void {
    if (this.parts.length === 0) return;
    const bytes = encoder.encode(this.parts.join(""));
    this.parts = [];
    this.size = 0;
    let off = 0;
    while (off < bytes.length) off += Deno.stdout.writeSync(bytes.subarray(off));
  }
}

/** Writes a file atomically: to a temporary name beside it, then renamed into place, so that
 * readers never see a half-written file. `fill` gets the open file. */
export function writeFileAtomic(path: string, fill: (file: Deno.FsFile) => void): void {
  const tmp = `${path}.${Deno.pid}.tmp`;
  const file = Deno.openSync(tmp, { write: true, create: true, truncate: true });
  try {
    fill(file);
    file.close();
  } catch (e) {
    try {
      file.close();
    } catch { /* already closed */ }
    try {
      Deno.removeSync(tmp);
    } catch { /* nothing to remove */ }
    throw e;
  }
  Deno.renameSync(tmp, path);
}

/** Writes `data` (text as UTF-8) to `path` atomically, as {@linkcode writeFileAtomic}. */
export function writeDataAtomic(path: string, data: Uint8Array | string): void {
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  writeFileAtomic(path, (file) => {
    let off = 0;
    while (off < bytes.length) off += file.writeSync(bytes.subarray(off));
  });
}

/** Runs a command's main function, turning thrown errors into one readable line on stderr and
 * exit status 1 (2 for usage errors). */
export function runMain(main: () => void | Promise<void>): void {
  Promise.resolve()
    .then(main)
    .catch((e: unknown) => {
      if (e instanceof UsageError) {
        console.error(`error: ${e.message}`);
        if (e.hint) console.error(e.hint);
        Deno.exit(2);
      }
      if (e instanceof Deno.errors.NotFound) {
        console.error(`error: ${e.message}`);
        Deno.exit(1);
      }
      console.error(`error: ${e instanceof Error ? e.message : String(e)}`);
      Deno.exit(1);
    });
}

/** A mistake on the command line. */
export class UsageError extends Error {
  override name = "UsageError";
  constructor(message: string, readonly hint?: string) {
    super(message);
  }
}
