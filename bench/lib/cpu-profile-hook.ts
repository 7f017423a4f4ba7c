// Preloaded into an operator under test (node --import) when BENCH_CPU_PROF is set: starts the V8
// sampling profiler at boot and writes <dir>/<name>-<n>.cpuprofile on each SIGUSR2, restarting the
// profile, so a window can be cut out of a running operator. Unlike --cpu-prof it needs no clean
// exit: an operator that is drowning (the very case worth profiling) may never exit cleanly.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.BENCH_CPU_PROF ?? '.';
const name = process.env.BENCH_CPU_PROF_NAME ?? `operator-${process.pid}`;
const session = new Session();
session.connect();
let n = 0;

function post(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
  return new Promise((resolve, reject) => session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))));
}

await post('Profiler.enable');
await post('Profiler.setSamplingInterval', { interval: 500 });
await post('Profiler.start');

process.on('SIGUSR2', () => {
  void (async () => {
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    writeFileSync(join(dir, `${name}-${++n}.cpuprofile`), JSON.stringify(profile));
    await post('Profiler.start');
  })();
});
