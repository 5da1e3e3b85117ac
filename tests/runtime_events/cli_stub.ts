/** The `events` command's file, module and console access, stubbed in memory (tests then need
 * no permissions): files read from `files`, modules imported from `modules`, output collected in
 * `out`, `err` and `written`. */
import type { EventsCliIO } from "../../cli/events.ts";

/** The stub's recorded output, next to the {@linkcode EventsCliIO} it implements. */
export interface EventsCliStub extends EventsCliIO {
  out: string;
  err: string;
  written: Map<string, string>;
}

/** A stubbed I/O over in-memory `files` and `modules`. */
export function eventsCliStub(
  files: Record<string, Uint8Array>,
  modules: Record<string, Record<string, unknown>> = {},
): EventsCliStub {
  const io: EventsCliStub = {
    out: "",
    err: "",
    written: new Map<string, string>(),
    readFile(path: string): Uint8Array {
      const f = files[path];
      if (f === undefined) throw new Deno.errors.NotFound(`No such file or directory: ${path}`);
      return f;
    },
    importModule(spec: string): Promise<Record<string, unknown>> {
      const m = modules[spec];
      return m ? Promise.resolve(m) : Promise.reject(new Error(`Module not found "${spec}"`));
    },
    stdout(text: string) {
      io.out += text;
    },
    stderr(text: string) {
      io.err += text;
    },
    async writeFile(
      path: string,
      fill: (write: (chunk: string) => void) => Promise<void> | void,
    ) {
      let text = "";
      await fill((c) => (text += c));
      io.written.set(path, text);
    },
  };
  return io;
}
