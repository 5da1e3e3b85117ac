/**
 * The one way files are written whole: into a temporary beside the file, `<path>.<pid>.tmp`,
 * then renamed into place, so that a reader sees the old file or the new one, never a part; when
 * the write or the rename throws, the temporary is removed before the error goes on. The
 * commands' writer (cli/_io.ts `writeOutput`) adds to this the cleanup on SIGINT/SIGTERM, the
 * sweep of temporaries left by killed processes and special files written in place; the
 * runtime_events producer saves its ring file with {@linkcode writeFileAtomic}.
 * @module
 */

/** Temporaries being written by this process. */
const live = new Set<string>();

/** The temporary a write of `path` by this process goes through: `<path>.<pid>.tmp`. */
export function temporaryOf(path: string): string {
  return `${path}.${Deno.pid}.tmp`;
}

/** The temporaries this process is writing now (for a cleanup on a signal). */
export function liveTemporaries(): readonly string[] {
  return [...live];
}

/** A file being written through its temporary. */
export interface TemporaryFile {
  /** The open temporary. */
  readonly file: Deno.FsFile;
  /** Its path ({@linkcode temporaryOf} the output). */
  readonly tmp: string;
}

/** Claims the temporary of `path` for this process; a second write of the same path while one
 * is under way is refused (it would write into the same temporary). */
function claim(path: string): string {
  const tmp = temporaryOf(path);
  if (live.has(tmp)) throw new Deno.errors.Busy(`cannot write ${path}: a write to it is under way`);
  live.add(tmp);
  return tmp;
}

/** Opens the temporary of `path` (created or truncated). */
export function openTemporary(path: string): TemporaryFile {
  const tmp = claim(path);
  try {
    return { tmp, file: Deno.openSync(tmp, { write: true, create: true, truncate: true }) };
  } catch (e) {
    live.delete(tmp);
    throw e;
  }
}

/** Closes `out` and renames its temporary to `path`; on failure the temporary is removed. */
export function commitTemporary(out: TemporaryFile, path: string): void {
  try {
    out.file.close();
    Deno.renameSync(out.tmp, path);
    live.delete(out.tmp);
  } catch (e) {
    discardTemporary(out);
    throw e;
  }
}

/** Closes `out` (if still open) and removes its temporary. Never throws. */
export function discardTemporary(out: TemporaryFile): void {
  try {
    out.file.close();
  } catch { /* already closed */ }
  try {
    Deno.removeSync(out.tmp);
  } catch { /* already gone */ }
  live.delete(out.tmp);
}

/** Writes all of `data` to `file`, looping over short writes. */
function writeAllSync(file: Deno.FsFile, data: Uint8Array): void {
  for (let off = 0; off < data.length;) {
    const n = file.writeSync(data.subarray(off));
    if (n <= 0) throw new Deno.errors.WriteZero("write took no bytes");
    off += n;
  }
}

/** Writes `data` as file `path` whole, through its temporary ({@linkcode temporaryOf}); when
 * anything throws, the temporary is removed and `path` is as it was. */
export function writeFileAtomicSync(path: string, data: Uint8Array): void {
  const out = openTemporary(path);
  try {
    writeAllSync(out.file, data);
  } catch (e) {
    discardTemporary(out);
    throw e;
  }
  commitTemporary(out, path);
}

/** {@linkcode writeFileAtomicSync}, written without blocking. */
export async function writeFileAtomic(path: string, data: Uint8Array): Promise<void> {
  const tmp = claim(path);
  try {
    await Deno.writeFile(tmp, data);
    await Deno.rename(tmp, path);
  } catch (e) {
    try {
      await Deno.remove(tmp);
    } catch { /* never made, or already gone */ }
    throw e;
  } finally {
    live.delete(tmp);
  }
}
