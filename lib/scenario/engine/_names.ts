/**
 * What a run knows by name: its domains, threads, profiles and user events, as the scenario
 * names them. Steps register what they create here and look it up (RunContext's `domain`,
 * `liveThread` and `threadName` check what they find).
 * @module
 */
import type { Domain, Thread } from "../../runtime/mod.ts";
import type { UserEvent } from "../../runtime_events/mod.ts";
import type { ProfileState } from "./_context.ts";

/** The named things of one run. */
export class RunNames {
  /** Domains by name (`main` first), running or not. */
  readonly domains: Map<string, Domain> = new Map();
  /** Threads by name (each domain's main thread is named after the domain). */
  readonly threads: Map<string, Thread> = new Map();
  /** Profiles the run started, by name, in order. */
  readonly profiles: Map<string, ProfileState> = new Map();
  /** User events registered, by name. */
  readonly userEvents: Map<string, UserEvent<unknown>> = new Map();
  readonly #threadNames = new Map<Thread, string>();

  /** Names thread `t`. */
  addThread(t: Thread, name: string): void {
    this.threads.set(name, t);
    this.#threadNames.set(t, name);
  }

  /** The name of thread `t` (`thread<id>` for one the scenario did not name). */
  threadName(t: Thread): string {
    return this.#threadNames.get(t) ?? `thread${t.id}`;
  }
}
