// `run NAME --env K=V … [--container C]`: the manual Job's containers with those environment variables
// set (an existing entry of the same name replaced in place, else appended), and an annotation that
// records what was overridden. Pure: parsing and a rewrite of the Job manifest.
import type { JobManifest } from '../api/resources.js';

/** On a manual Job started with --env: JSON {"containers": [...], "env": {"K": "V", …}}. */
export const ANNOTATION_ENV_OVERRIDES = 'secondcron.io/env-overrides';

export interface EnvOverrides {
  /** In the order given. */
  env: ReadonlyArray<{ name: string; value: string }>;
  /** Only this container (or init container); absent: every container of the pod template. */
  container?: string;
}

/** Kubernetes' classic rule for an environment variable name (accepted by every API server version). */
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/** `K=V` (V may be empty and may hold "="), or why not. */
export function parseEnvAssignment(text: string): { ok: true; name: string; value: string } | { ok: false; message: string } {
  const eq = text.indexOf('=');
  if (eq < 0) return { ok: false, message: `--env "${text}" is not NAME=VALUE (no "=")` };
  const name = text.slice(0, eq);
  if (!ENV_NAME.test(name)) {
    return { ok: false, message: `--env "${text}": "${name}" is not a valid environment variable name (letters, digits, "_", "-", "."; not starting with a digit)` };
  }
  return { ok: true, name, value: text.slice(eq + 1) };
}

type Container = Record<string, unknown> & { name: string };

/** A copy of the Job with the overrides applied and recorded; throws an Error naming the containers there are for an unknown --container. */
export function applyEnvOverrides(job: JobManifest, overrides: EnvOverrides): JobManifest {
  const copy = structuredClone(job);
  const podSpec = record(record(copy.spec?.template)?.spec);
  const containers = containerList(podSpec?.containers);
  const initContainers = containerList(podSpec?.initContainers);
  let targets: Container[];
  if (overrides.container === undefined) {
    targets = containers;
  } else {
    const found = [...containers, ...initContainers].find((c) => c.name === overrides.container);
    if (found === undefined) {
      const known = [...containers.map((c) => c.name), ...initContainers.map((c) => `${c.name} (init)`)];
      throw new EnvOverrideError(`container "${overrides.container}" not found in the Job template; its containers: ${known.join(', ') || 'none'}`);
    }
    targets = [found];
  }
  if (targets.length === 0) throw new EnvOverrideError('the Job template has no containers to set --env in');
  for (const container of targets) container.env = withEnv(container.env, overrides.env);
  const recorded = { containers: targets.map((c) => c.name), env: Object.fromEntries(overrides.env.map((e) => [e.name, e.value])) };
  copy.metadata = { ...copy.metadata, annotations: { ...copy.metadata.annotations, [ANNOTATION_ENV_OVERRIDES]: JSON.stringify(recorded) } };
  return copy;
}

export class EnvOverrideError extends Error {
  override readonly name = 'EnvOverrideError';
}

/** The env list with each override replacing the entry of its name (value or valueFrom) in place, or appended. */
function withEnv(current: unknown, overrides: EnvOverrides['env']): unknown[] {
  const env: unknown[] = Array.isArray(current) ? [...(current as unknown[])] : [];
  for (const { name, value } of overrides) {
    const entry = { name, value };
    const at = env.findIndex((e) => record(e)?.name === name);
    if (at >= 0) env[at] = entry;
    else env.push(entry);
  }
  return env;
}

function containerList(value: unknown): Container[] {
  if (!Array.isArray(value)) return [];
  return (value as unknown[]).filter((c): c is Container => typeof record(c)?.name === 'string');
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
