// The floor's batch phase in a process of its own, so the CPU it reports is our client's alone: the
// operator's KubeRest posting the operator's Job bodies (buildJob, metadata-only answers, as many
// in flight as --max-concurrent-creates) released together on every whole second, plus a watch of
// those Jobs decoded as the operator's Job reflector receives it (KubeRest.watch: one JSON.parse per
// event, full objects, the owner label selector). Like the operator at a history limit of 3, it also
// deletes, once each second's creates are answered, the Jobs of the batch HISTORY + 1 seconds back
// (the operator's own deleteJob: Background, uid precondition, answer discarded), so the server does
// the same creates and the same deletions at the same rate (issue 24). No scheduler, queue, cache
// or status work: what the operator spends per Job beyond this is its own.
//
// Started by scenarios/floor.ts: reads a FloorClientInput (JSON) on stdin, writes one
// FloorClientOutput (JSON) on stdout, progress and errors on stderr.
import pLimit from 'p-limit';

import { type Job, LABEL_OWNER, type SecondCronJob, jobsPath } from '../../src/api/resources.js';
import { deleteJob } from '../../src/controller/finalizer.js';
import { buildJob } from '../../src/controller/job-builder.js';
import { restFor } from './kube.js';
import { sleep, sleepUntil } from './progress.js';

export interface FloorClientInput {
  kubeconfigPath: string;
  namespace: string;
  /** The owner of the Jobs: a real SecondCronJob, so bodies carry its controller reference. */
  scj: SecondCronJob;
  firstSlotS: number;
  batches: number;
  size: number;
  concurrency: number;
  /**
   * false: no watch (bench-capacity, which judges only the audit log): over 10 minutes at 100 Jobs/s
   * the server ended this client's watch after a few seconds (400 of 60,100 Jobs watched).
   */
  watch?: boolean;
}

export interface FloorClientOutput {
  /** Job name → the whole second (epoch ms) its batch was released. */
  released: Array<[string, number]>;
  creates: number;
  /** process.cpuUsage() from the first release until every create was answered and watched, s. */
  cpu_user_s: number;
  cpu_system_s: number;
  window_s: number;
  /** Watch events decoded in that window (ADDED, the Job controller's MODIFIED, DELETED). */
  watch_events: number;
  /** History deletions sent in that window. */
  deletes: number;
}

/** successfulJobsHistoryLimit's default: the operator keeps 3 finished Jobs per schedule and deletes the one before. */
const HISTORY = 3;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function run(input: FloorClientInput): Promise<FloorClientOutput> {
  const rest = restFor(input.kubeconfigPath);
  const path = jobsPath(input.namespace);
  // Watch from now on: without a resourceVersion the server would first replay every Job of the
  // earlier floor phases as ADDED. Every ADDED after this is one of ours.
  const list = await rest.request<{ metadata: { resourceVersion: string } }>({ verb: 'list', path, query: { limit: 1, labelSelector: LABEL_OWNER } });
  let events = 0;
  let added = 0;
  let wanted = Infinity;
  let reached: () => void = () => {};
  const abort = new AbortController();
  const watched = input.watch !== false;
  const watching = !watched
    ? Promise.resolve()
    : rest
    .watch(
      path,
      { labelSelector: LABEL_OWNER, allowWatchBookmarks: true, resourceVersion: list.metadata.resourceVersion },
      (type) => {
        events++;
        if (type === 'ADDED' && ++added >= wanted) reached();
      },
      abort.signal,
    )
    .catch((err: unknown) => {
      if (!abort.signal.aborted) throw err;
    });
  const watchedAtLeast = async (n: number): Promise<void> => {
    if (!watched) return;
    let timer: NodeJS.Timeout | undefined;
    const enough = new Promise<void>((resolve) => {
      wanted = n;
      reached = resolve;
      if (added >= n) resolve();
    });
    await Promise.race([enough, watching, new Promise<void>((resolve) => (timer = setTimeout(resolve, 30_000)))]);
    clearTimeout(timer);
    if (added < n) throw new Error(`floor client: watched ${added} of ${n} Jobs within 30 s`);
  };

  const limit = pLimit(input.concurrency);
  let slot = input.firstSlotS;
  let created = 0;
  let deleted = 0;
  /** Each second's created Jobs (as answered), oldest first, until their deletion is sent. */
  const history: Promise<Job[]>[] = [];
  /** `count` batches on consecutive whole seconds; resolves when all were answered and watched. */
  const batches = async (count: number): Promise<Array<[string, number]>> => {
    const released: Array<[string, number]> = [];
    const creates: Promise<unknown>[] = [];
    for (let b = 0; b < count; b++) {
      await sleepUntil(Math.ceil(Date.now() / 1000) * 1000);
      const second = Date.now();
      const jobs = Array.from({ length: input.size }, () => buildJob(input.scj, slot++ * 1000));
      for (const job of jobs) released.push([job.metadata.name, second]);
      // Not awaited: like the operator, the next second's batch does not wait for this one.
      const batch = jobs.map((job) => limit(() => rest.request<Job>({ verb: 'create', path, body: job, timeoutMs: 30_000, metadataOnly: true, purpose: 'job_create' })));
      // Without the answers: 10 minutes of them (bench-capacity) outgrew the operator's heap limit.
      creates.push(...batch.map((answer) => answer.then(() => undefined)));
      const answered = Promise.all(batch);
      history.push(answered);
      // After this second's creates are answered (the operator's WritePriority), the batch HISTORY + 1 back.
      const old = history.length > HISTORY ? history.shift() : undefined;
      if (old) {
        creates.push(
          answered.then(async () => {
            const gone = await old;
            deleted += gone.length;
            await Promise.all(gone.map((j) => deleteJob(rest, j)));
          }),
        );
      }
      await sleep(500);
    }
    await Promise.all(creates);
    created += released.length;
    await watchedAtLeast(created);
    return released;
  };

  // One unmeasured batch first: opens the connections (TLS handshakes) and warms the JIT, as a
  // running operator's are.
  await batches(1);
  const cpu0 = process.cpuUsage();
  const eventsBefore = events;
  const deletedBefore = deleted;
  const t0 = performance.now();
  const released = await batches(input.batches);
  const cpu = process.cpuUsage(cpu0);
  const windowS = (performance.now() - t0) / 1000;
  const watchEvents = events - eventsBefore;
  abort.abort();
  await watching;
  return { released, creates: released.length, cpu_user_s: cpu.user / 1e6, cpu_system_s: cpu.system / 1e6, window_s: windowS, watch_events: watchEvents, deletes: deleted - deletedBefore };
}

readStdin()
  .then((text) => run(JSON.parse(text) as FloorClientInput))
  .then(
    (out) => {
      process.stdout.write(JSON.stringify(out) + '\n', () => process.exit(0));
    },
    (err: unknown) => {
      process.stderr.write(`floor client failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
