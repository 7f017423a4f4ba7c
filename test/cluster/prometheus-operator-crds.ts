// The ServiceMonitor, PodMonitor and PrometheusRule CRDs exactly as prometheus-operator releases them, so the
// chart's monitoring objects are validated by their real schemas (not stand-ins). They come from the
// Go module proxy (the module's example/prometheus-operator-crd/ holds the generated CRDs) and are
// cached beside the control-plane binaries, outside the clone: nothing generated is vendored.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

import { runCommand } from './run-command.js';

export const PROMETHEUS_OPERATOR_MODULE = 'github.com/prometheus-operator/prometheus-operator';
export const PROMETHEUS_OPERATOR_VERSION = 'v0.85.0';
const FILES = ['monitoring.coreos.com_servicemonitors.yaml', 'monitoring.coreos.com_podmonitors.yaml', 'monitoring.coreos.com_prometheusrules.yaml'] as const;

/** Paths of the CRD files in the cache, downloading the module once if they are not there yet. */
export async function prometheusOperatorCrds(env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  const dir = join(env.SECONDCRON_CACHE ?? join(homedir(), '.cache', 'secondcron'), 'prometheus-operator-crds', PROMETHEUS_OPERATOR_VERSION);
  const paths = FILES.map((f) => join(dir, f));
  if (paths.every((p) => existsSync(p))) return paths;

  // Outside any module, `go mod download -json module@version` fetches into the module cache and
  // prints where it extracted the tree.
  const scratch = mkdtempSync(join(tmpdir(), 'secondcron-gomod-'));
  try {
    const res = await runCommand('go', ['mod', 'download', '-json', `${PROMETHEUS_OPERATOR_MODULE}@${PROMETHEUS_OPERATOR_VERSION}`], {
      cwd: scratch,
      env: { ...env, GO111MODULE: 'on', GOFLAGS: '-mod=mod' },
      timeoutMs: 600_000,
    }).catch((err: unknown) => {
      throw new Error(`cannot run go to fetch the prometheus-operator CRDs (Go is needed for the test control plane anyway): ${String(err)}`);
    });
    const { dir: moduleDir, error } = parseDownload(res.stdout);
    if (res.code !== 0 || !moduleDir) {
      throw new Error(`go mod download ${PROMETHEUS_OPERATOR_MODULE}@${PROMETHEUS_OPERATOR_VERSION} failed: ${error ?? ''}${res.stderr}`);
    }
    const partial = `${dir}.partial-${process.pid}`;
    mkdirSync(partial, { recursive: true });
    for (const f of FILES) copyFileSync(join(moduleDir, 'example', 'prometheus-operator-crd', f), join(partial, f));
    rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(partial, dir); // atomic: a reader sees both files or none
    } catch (err) {
      rmSync(partial, { recursive: true, force: true });
      if (!paths.every((p) => existsSync(p))) throw err; // else another process won the race
    }
    return paths;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function parseDownload(stdout: string): { dir?: string; error?: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null) return {};
  return {
    ...('Dir' in parsed && typeof parsed.Dir === 'string' ? { dir: parsed.Dir } : {}),
    ...('Error' in parsed && typeof parsed.Error === 'string' ? { error: parsed.Error } : {}),
  };
}
