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
