// A process taking the build lock (lib/ocaml/_lock.ts) once per round, for lock_test.ts's
// mutual-exclusion test. Arguments: DIR ID ROUNDS PROCESSES. Round r happens in DIR/round-r: the
// processes meet there (each writes ready-ID and waits for all), then each takes DIR/round-r/lock,
// creates DIR/round-r/inside exclusively (failing if another holder is inside), stays a moment,
// removes it and releases the lock. Each line of DIR/round-r/log-ID: enter and leave times (ms),
// and "overlap" when the marker was already there. Needs --allow-all (it reads /proc).
import { acquireLock } from "../../lib/ocaml/_lock.ts";

const [dir, id, roundsText, procsText] = Deno.args;
const rounds = Number(roundsText), procs = Number(procsText);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.timeOrigin + performance.now();
const isAlive = (pid: number) => {
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
};

for (let r = 0; r < rounds; r++) {
  const rd = `${dir}/round-${r}`;
  Deno.writeTextFileSync(`${rd}/ready-${id}`, "");
  const deadline = Date.now() + 60_000;
  while ([...Deno.readDirSync(rd)].filter((e) => e.name.startsWith("ready-")).length < procs) {
    if (Date.now() > deadline) throw new Error(`round ${r}: the others never came`);
    await sleep(1);
  }
  const release = await acquireLock(`${rd}/lock`, {
    timeoutMs: 60_000,
    pollMs: 3,
    onWait() {},
    onStale() {},
    isAlive,
  });
  const enter = now();
  let overlap = false;
  try {
    Deno.openSync(`${rd}/inside`, { write: true, createNew: true }).close();
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    overlap = true;
  }
  await sleep(1 + Math.random() * 3);
  if (!overlap) Deno.removeSync(`${rd}/inside`);
  const leave = now();
  await release();
  Deno.writeTextFileSync(`${rd}/log-${id}`, `${enter} ${leave}${overlap ? " overlap" : ""}\n`);
}
