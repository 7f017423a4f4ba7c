// Installs the SecondCronJob CRD into a test cluster and waits until it is served.
//
// Plain client-side `kubectl apply`, as users and Argo CD apply it (the CRD fits its 256 KiB
// last-applied annotation: test/crd/short-descriptions.ts). And a poll instead of
// `kubectl wait --for=condition=established`: for a CRD this large the API server takes a moment to
// write the first status, and kubectl 1.36's wait fails at once on a missing status.conditions.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { repoRoot } from './repo-root.js';
import type { CommandResult } from './run-command.js';

export const CRD_NAME = 'secondcronjobs.secondcron.io';
export const CRD_PATH = join(repoRoot(), 'config', 'crd', `${CRD_NAME}.yaml`);

export async function installCrd(kubectl: (args: string[]) => Promise<CommandResult>, timeoutMs = 60_000): Promise<void> {
  const applied = await kubectl(['apply', '-f', CRD_PATH]);
  if (applied.code !== 0) throw new Error(`applying the CRD failed: ${applied.stderr.trim()}`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await kubectl(['get', 'crd', CRD_NAME, '-o', 'jsonpath={.status.conditions[?(@.type=="Established")].status}']);
    if (res.code === 0 && res.stdout.trim() === 'True') return;
    if (Date.now() > deadline) throw new Error(`the CRD is not Established after ${timeoutMs} ms: ${res.stdout}${res.stderr}`);
    await sleep(100);
  }
}
