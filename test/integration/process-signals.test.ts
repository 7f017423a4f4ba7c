// SIGTERM while the operator is still starting (a pod deleted during start-up): with node as PID 1,
// a signal without a handler is dropped by the kernel, so the pod would live on until SIGKILL at the
// end of its grace period. The operator must exit at once.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type Server, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { kubeconfigYaml } from '../cluster/kubeconfig.js';
import { eventually } from './helpers/eventually.js';
import { testOperator } from './helpers/operator.js';
import { podLauncher, sandboxedPid } from './helpers/pod-sandbox.js';

/** An "API server" that accepts connections and never answers: start-up waits on its first list. */
async function silentServer(): Promise<{ server: Server; port: number }> {
  const server = createServer(() => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return { server, port: address.port };
}

test('SIGTERM during start-up: node as PID 1 exits at once, not after the grace period', async (t) => {
  const { server, port } = await silentServer();
  const dir = mkdtempSync(join(tmpdir(), 'secondcron-signals-'));
  t.after(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigYaml({ server: `https://127.0.0.1:${port}`, caPem: '', user: 'nobody', token: 'unused' }));
  const op = testOperator({ kubeconfig, namespaces: ['start-up'], identity: 'sigterm-startup', launcher: podLauncher() });
  t.after(() => op.dispose());
  await op.start();
  // Serving metrics, caches not synced: in the middle of start-up.
  await eventually('metrics served during start-up', async () => ((await op.metrics().catch(() => '')) !== '' ? true : undefined), { timeoutMs: 20_000 });
  assert.ok(!(await fetch(`http://127.0.0.1:${op.healthPort}/readyz`)).ok, 'still starting (caches not synced)');

  const pid = sandboxedPid(op.pid as number);
  const sentAt = Date.now();
  process.kill(pid, 'SIGTERM');
  await eventually('operator exits after SIGTERM', async () => (op.running ? undefined : true), { timeoutMs: 10_000, intervalMs: 20 }).catch((err: unknown) => {
    throw new Error(`${String(err)}\n${op.logs(20)}`);
  });
  const exitMs = Date.now() - sentAt;
  t.diagnostic(`exited ${exitMs} ms after SIGTERM`);
  assert.match(op.logs(), /signal during start-up; exiting now/);
});
