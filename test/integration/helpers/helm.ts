// The pinned helm (built from its Go module by test/cluster/build-binaries.sh) run against the chart
// in helm/secondcron, and its rendered output parsed into objects.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { type KubernetesObject, loadAllYaml } from '@kubernetes/client-node';

import { runCommand, type CommandResult } from '../../cluster/run-command.js';
import { repoRoot } from '../../cluster/repo-root.js';
import { testBinDir } from './cluster-env.js';

export const REPO_ROOT = repoRoot();

export const CHART_DIR = join(REPO_ROOT, 'helm', 'secondcron');

// helm keeps a cache, a config (repositories) and plugin data under $HOME; tests get their own
// so they neither read nor change the developer's.
const HELM_HOME = mkdtempSync(join(tmpdir(), 'secondcron-helm-home-'));
for (const sub of ['cache', 'config', 'data']) mkdirSync(join(HELM_HOME, sub), { recursive: true });
process.on('exit', () => rmSync(HELM_HOME, { recursive: true, force: true }));

export interface HelmOptions {
  /** Kubeconfig for commands that talk to a cluster (install, upgrade, …). */
  kubeconfig?: string;
  timeoutMs?: number;
}

export function helm(args: string[], opts: HelmOptions = {}): Promise<CommandResult> {
  const binDir = testBinDir();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${binDir}:${process.env.PATH ?? ''}`,
    HELM_CACHE_HOME: join(HELM_HOME, 'cache'),
    HELM_CONFIG_HOME: join(HELM_HOME, 'config'),
    HELM_DATA_HOME: join(HELM_HOME, 'data'),
  };
  if (opts.kubeconfig) env.KUBECONFIG = opts.kubeconfig;
  else delete env.KUBECONFIG;
  const kube = opts.kubeconfig ? ['--kubeconfig', opts.kubeconfig] : [];
  return runCommand(join(binDir, 'helm'), [...args, ...kube], { env, cwd: REPO_ROOT, timeoutMs: opts.timeoutMs ?? 300_000 });
}

/** helm that throws with its output when it fails; returns stdout. */
export async function helmOk(args: string[], opts: HelmOptions = {}): Promise<string> {
  const res = await helm(args, opts);
  if (res.code !== 0) throw new Error(`helm ${args.join(' ')} failed (${res.code}):\n${res.stderr}${res.stdout}`);
  return res.stdout;
}

/** Writes chart values to a file for `-f` (JSON is YAML, so no serializer is needed). */
export function valuesFile(values: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'secondcron-values-'));
  const path = join(dir, 'values.json');
  writeFileSync(path, JSON.stringify(values, null, 2));
  return path;
}

/** Raw object shape of anything rendered; typed fields come from client-node's models. */
export type Manifest = KubernetesObject & Record<string, unknown>;

/**
 * Splits multi-document YAML and parses each document with client-node (built-in kinds become its
 * typed models; others stay plain objects). Documents that hold only comments are dropped.
 */
export function parseManifests(text: string): Manifest[] {
  return text
    .split(/^---[ \t]*$/m)
    .filter((doc) => doc.split('\n').some((line) => line.trim() !== '' && !line.trim().startsWith('#')))
    .flatMap((doc) => loadAllYaml(doc) as Manifest[]);
}

/** Parses a single YAML document that is not a Kubernetes object (values.yaml, a rules file). */
export function parseYaml<T>(text: string): T {
  const docs = parseManifests(text);
  if (docs.length !== 1) throw new Error(`expected one YAML document, found ${docs.length}`);
  return docs[0] as unknown as T;
}

export interface RenderOptions {
  release?: string;
  namespace?: string;
  values?: Record<string, unknown>;
  /** Extra flags, e.g. ['--set', 'replicaCount=-1']. */
  args?: string[];
}

/** `helm template` of the chart; rejects with helm's stderr when rendering fails. */
export async function renderChart(opts: RenderOptions = {}): Promise<Manifest[]> {
  const res = await templateChart(opts);
  if (res.code !== 0) throw new Error(`helm template failed (${res.code}):\n${res.stderr}`);
  return parseManifests(res.stdout);
}

export async function templateChart(opts: RenderOptions = {}): Promise<CommandResult> {
  const args = ['template', opts.release ?? 'sc', CHART_DIR, '--namespace', opts.namespace ?? 'secondcron-system'];
  let file: string | undefined;
  if (opts.values) {
    file = valuesFile(opts.values);
    args.push('-f', file);
  }
  try {
    return await helm([...args, ...(opts.args ?? [])]);
  } finally {
    if (file) rmSync(dirname(file), { recursive: true, force: true });
  }
}

/** The one object of a kind (and name, if given); throws listing what there is otherwise. */
export function only<T = Manifest>(docs: Manifest[], kind: string, name?: string): T {
  const found = docs.filter((d) => d.kind === kind && (name === undefined || d.metadata?.name === name));
  if (found.length !== 1) {
    const have = docs.map((d) => `${d.kind}/${d.metadata?.name}`).join(', ');
    throw new Error(`expected exactly one ${kind}${name ? '/' + name : ''}, found ${found.length} among: ${have}`);
  }
  return found[0] as T;
}

export function ofKind<T = Manifest>(docs: Manifest[], kind: string): T[] {
  return docs.filter((d) => d.kind === kind) as T[];
}
