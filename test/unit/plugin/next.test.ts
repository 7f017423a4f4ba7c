import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dump } from 'js-yaml';

import { nextCommand } from '../../../src/plugin/commands/next.js';
import type { PluginContext } from '../../../src/plugin/context.js';
import type { Target } from '../../../src/plugin/target.js';
import { scj } from '../controller/fixtures.js';

const NOW = Date.parse('2026-12-02T10:00:00Z');
/** printf '%s' team-b/hb | sha256sum: the first 4 bytes mod 60. */
const HB_IN_TEAM_B = 53;

function context(stdin: string, target: () => Promise<Target>): PluginContext & { printed: string[] } {
  const printed: string[] = [];
  return { printed, out: (t) => void printed.push(t), raw: (t) => void printed.push(t), warn: () => undefined, nowMs: () => NOW, random: () => 0.5, readStdin: () => stdin, target };
}

const manifest = (namespace: string | undefined) => {
  const { metadata, ...rest } = scj({ intervalSeconds: undefined, schedule: 'H * * * * *' });
  const { namespace: _ns, uid: _uid, resourceVersion: _rv, generation: _g, creationTimestamp: _c, ...meta } = metadata;
  return dump({ ...rest, metadata: { ...meta, ...(namespace ? { namespace } : {}) } });
};

test('next -f: H resolves for the file\'s namespace/name (printed above the times); the cluster is not asked', async () => {
  const ctx = context(manifest('ns'), () => Promise.reject(new Error('no cluster needed')));
  await nextCommand({ scope: { names: [] }, files: ['-'], count: 2, output: { format: 'default' } }, ctx);
  const lines = (ctx.printed[0] ?? '').split('\n');
  assert.equal(lines[0], 'schedule "H * * * * *" resolved to "49 * * * * *" for ns/hb');
  assert.match(lines[2] ?? '', /^1\s+2026-12-02T10:00:49Z\s+2026-12-02T10:00:49Z\s+in 49s$/);
  assert.match(lines[3] ?? '', /^2\s+2026-12-02T10:01:49Z/);
});

test('next -f without a namespace: kubectl\'s namespace (-n or the context\'s) is the one H hashes', async () => {
  let asked = 0;
  const ctx = context(manifest(undefined), () => {
    asked++;
    return Promise.resolve({ namespace: 'team-b', rest: undefined as never });
  });
  await nextCommand({ scope: { names: [] }, files: ['-'], count: 1, output: { format: 'json' } }, ctx);
  assert.equal(asked, 1);
  const [printed] = JSON.parse(ctx.printed[0] ?? '') as { namespace: string; schedule: string; resolvedSchedule: string; next: { utc: string }[] }[];
  assert.deepEqual({ ns: printed?.namespace, schedule: printed?.schedule, resolved: printed?.resolvedSchedule }, { ns: 'team-b', schedule: 'H * * * * *', resolved: `${HB_IN_TEAM_B} * * * * *` });
  assert.equal(printed?.next[0]?.utc, `2026-12-02T10:00:${String(HB_IN_TEAM_B).padStart(2, '0')}Z`);
});

const listManifest = (spec: Record<string, unknown>): string =>
  dump({ apiVersion: 'secondcron.io/v1', kind: 'SecondCronJob', metadata: { name: 'hb', namespace: 'ns' }, spec: { jobTemplate: { spec: {} }, ...spec } });

test('next -f with schedules: the union of the expressions, an instant in two listed once; H resolved in each', async () => {
  const ctx = context(listManifest({ schedules: ['H * * * * *', '0,49 * * * * *'] }), () => Promise.reject(new Error('no cluster needed')));
  await nextCommand({ scope: { names: [] }, files: ['-'], count: 4, output: { format: 'json' } }, ctx);
  const [printed] = JSON.parse(ctx.printed[0] ?? '') as { schedules: string[]; resolvedSchedules: string[]; resolvedSchedule?: string; next: { utc: string }[] }[];
  // H in ns/hb is 49 (the first test): 49 is in both expressions and fires once.
  assert.deepEqual(printed?.resolvedSchedules, ['49 * * * * *', '0,49 * * * * *']);
  assert.deepEqual(printed?.schedules, ['H * * * * *', '0,49 * * * * *']);
  assert.equal(printed?.resolvedSchedule, undefined);
  assert.deepEqual(printed?.next.map((n) => n.utc), ['2026-12-02T10:00:49Z', '2026-12-02T10:01:00Z', '2026-12-02T10:01:49Z', '2026-12-02T10:02:00Z']);

  const text = context(listManifest({ schedules: ['H * * * * *', '0,49 * * * * *'] }), () => Promise.reject(new Error('no cluster needed')));
  await nextCommand({ scope: { names: [] }, files: ['-'], count: 1, output: { format: 'default' } }, text);
  assert.equal((text.printed[0] ?? '').split('\n')[0], 'schedules ["H * * * * *","0,49 * * * * *"] resolved to ["49 * * * * *","0,49 * * * * *"] for ns/hb');
});

test('next -f with a window: no slot outside it, and a line that says so', async () => {
  const future = context(listManifest({ schedule: '0 * * * * *', notBefore: '2027-01-01T00:00:00Z', notAfter: '2027-01-01T00:02:00Z' }), () => Promise.reject(new Error('no cluster needed')));
  await nextCommand({ scope: { names: [] }, files: ['-'], count: 5, output: { format: 'default' } }, future);
  const lines = (future.printed[0] ?? '').split('\n');
  assert.equal(lines[0], 'not yet active: no slot before notBefore 2027-01-01T00:00:00Z (nor after notAfter 2027-01-01T00:02:00Z)');
  assert.equal(lines.filter((l) => /^\d+\s+2027-01-01T00:0[0-2]:00Z/.test(l)).length, 3, (future.printed[0] ?? ''));
  assert.equal(lines.length, 5, 'the note, the header and 3 slots: none after notAfter');

  const ended = context(listManifest({ intervalSeconds: 5, notAfter: '2026-12-01T00:00:00Z' }), () => Promise.reject(new Error('no cluster needed')));
  await nextCommand({ scope: { names: [] }, files: ['-'], count: 5, output: { format: 'json' } }, ended);
  const [printed] = JSON.parse(ended.printed[0] ?? '') as { window: string; next: unknown[] }[];
  assert.deepEqual({ window: printed?.window, count: printed?.next.length }, { window: 'WindowEnded', count: 0 });
});
