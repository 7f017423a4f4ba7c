import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dump, load } from 'js-yaml';

import type { JobManifest } from '../../../src/api/resources.js';
import { runCommand } from '../../../src/plugin/commands/run.js';
import type { PluginContext } from '../../../src/plugin/context.js';
import { ANNOTATION_ENV_OVERRIDES, EnvOverrideError, applyEnvOverrides, parseEnvAssignment } from '../../../src/plugin/env-overrides.js';
import { PluginError } from '../../../src/plugin/errors.js';
import type { Target } from '../../../src/plugin/target.js';
import { scj } from '../controller/fixtures.js';

const template = {
  spec: {
    template: {
      spec: {
        restartPolicy: 'Never',
        initContainers: [{ name: 'setup', image: 'i' }],
        containers: [
          { name: 'main', image: 'i', env: [{ name: 'A', value: 'old' }, { name: 'SECRET', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }, { name: 'Z', value: 'z' }] },
          { name: 'sidecar', image: 'i' },
        ],
      },
    },
  },
};

function job(): JobManifest {
  return { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'hb-manual-abcde', namespace: 'ns', annotations: { 'secondcron.io/instantiate': 'manual' } }, spec: structuredClone(template.spec) };
}

const containersOf = (j: JobManifest): Array<{ name: string; env?: unknown[] }> => (j.spec as typeof template.spec).template.spec.containers as Array<{ name: string; env?: unknown[] }>;
const initOf = (j: JobManifest): Array<{ name: string; env?: unknown[] }> => (j.spec as typeof template.spec).template.spec.initContainers as Array<{ name: string; env?: unknown[] }>;

test('parseEnvAssignment: NAME=VALUE, the value may be empty or hold "="; malformed input says why', () => {
  assert.deepEqual(parseEnvAssignment('A=1'), { ok: true, name: 'A', value: '1' });
  assert.deepEqual(parseEnvAssignment('A='), { ok: true, name: 'A', value: '' });
  assert.deepEqual(parseEnvAssignment('QUERY=a=b&c=d'), { ok: true, name: 'QUERY', value: 'a=b&c=d' });
  assert.deepEqual(parseEnvAssignment('my.var-1=x'), { ok: true, name: 'my.var-1', value: 'x' });
  assert.deepEqual(parseEnvAssignment('A'), { ok: false, message: '--env "A" is not NAME=VALUE (no "=")' });
  assert.deepEqual(parseEnvAssignment('=1'), { ok: false, message: '--env "=1": "" is not a valid environment variable name (letters, digits, "_", "-", "."; not starting with a digit)' });
  assert.equal(parseEnvAssignment('1A=x').ok, false);
  assert.equal(parseEnvAssignment('A B=x').ok, false);
});

test('every container: an existing entry replaced in place (valueFrom too), a new one appended; init containers untouched', () => {
  const out = applyEnvOverrides(job(), { env: [{ name: 'A', value: 'new' }, { name: 'SECRET', value: 'plain' }, { name: 'NEW', value: '' }] });
  const [main, sidecar] = containersOf(out);
  assert.deepEqual(main?.env, [{ name: 'A', value: 'new' }, { name: 'SECRET', value: 'plain' }, { name: 'Z', value: 'z' }, { name: 'NEW', value: '' }]);
  assert.deepEqual(sidecar?.env, [{ name: 'A', value: 'new' }, { name: 'SECRET', value: 'plain' }, { name: 'NEW', value: '' }]);
  assert.equal(initOf(out)[0]?.env, undefined);
  assert.deepEqual(JSON.parse(out.metadata.annotations?.[ANNOTATION_ENV_OVERRIDES] ?? ''), { containers: ['main', 'sidecar'], env: { A: 'new', SECRET: 'plain', NEW: '' } });
  assert.equal(out.metadata.annotations?.['secondcron.io/instantiate'], 'manual', 'other annotations kept');
  assert.deepEqual(containersOf(job())[0]?.env?.[0], { name: 'A', value: 'old' }, 'the input is not changed');
});

test('--container: only that one, init containers included; an unknown one is refused naming the others', () => {
  const out = applyEnvOverrides(job(), { env: [{ name: 'A', value: '1' }], container: 'sidecar' });
  assert.deepEqual(containersOf(out).map((c) => c.env), [containersOf(job())[0]?.env, [{ name: 'A', value: '1' }]]);
  const init = applyEnvOverrides(job(), { env: [{ name: 'A', value: '1' }], container: 'setup' });
  assert.deepEqual(initOf(init)[0]?.env, [{ name: 'A', value: '1' }]);
  assert.deepEqual(JSON.parse(init.metadata.annotations?.[ANNOTATION_ENV_OVERRIDES] ?? ''), { containers: ['setup'], env: { A: '1' } });
  assert.throws(() => applyEnvOverrides(job(), { env: [{ name: 'A', value: '1' }], container: 'mian' }),
    (e: unknown) => e instanceof EnvOverrideError && e.message === 'container "mian" not found in the Job template; its containers: main, sidecar, setup (init)');
});

function context(resource: unknown): PluginContext & { printed: string[]; asked: string[] } {
  const printed: string[] = [];
  const asked: string[] = [];
  const rest = { server: 'https://test', request: (req: { verb: string }) => { asked.push(req.verb); return Promise.resolve(resource); } };
  const target = (): Promise<Target> => Promise.resolve({ namespace: 'ns', rest: rest as unknown as Target['rest'] });
  return { printed, asked, out: (t) => void printed.push(t), raw: (t) => void printed.push(t), warn: () => undefined, nowMs: () => 0, random: () => 0.5, readStdin: () => '', target };
}

test('run --env --dry-run=client -o yaml: the manual Job with the variables and the annotation; nothing is created', async () => {
  const owner = scj({ jobTemplate: template });
  const ctx = context(owner);
  await runCommand({ resource: 'hb', envOverrides: { env: [{ name: 'A', value: 'x=y' }], container: 'main' }, dryRun: 'client', output: { format: 'yaml' } }, ctx);
  assert.deepEqual(ctx.asked, ['get'], 'only the SecondCronJob is read');
  const printed = load(ctx.printed.join('\n')) as JobManifest;
  assert.equal(printed.kind, 'Job');
  assert.match(printed.metadata.name, /^hb-manual-[a-z0-9]{5}$/);
  assert.deepEqual(containersOf(printed)[0]?.env, [{ name: 'A', value: 'x=y' }, { name: 'SECRET', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }, { name: 'Z', value: 'z' }]);
  assert.equal(containersOf(printed)[1]?.env, undefined);
  assert.equal(printed.metadata.annotations?.[ANNOTATION_ENV_OVERRIDES], '{"containers":["main"],"env":{"A":"x=y"}}');
  assert.equal(printed.metadata.annotations?.['secondcron.io/instantiate'], 'manual');
  assert.ok(dump(printed).length > 0);
});

test('run --container unknown: a clear error, and no create is sent', async () => {
  const ctx = context(scj({ jobTemplate: template }));
  await assert.rejects(
    runCommand({ resource: 'hb', envOverrides: { env: [{ name: 'A', value: '1' }], container: 'nope' }, dryRun: 'none', output: { format: 'default' } }, ctx),
    (e: unknown) => e instanceof PluginError && e.message === 'secondcronjob.secondcron.io/hb: container "nope" not found in the Job template; its containers: main, sidecar, setup (init)',
  );
  assert.deepEqual(ctx.asked, ['get']);
});
