import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dump } from 'js-yaml';

import { validateCommand } from '../../../src/plugin/commands/validate.js';
import type { PluginContext } from '../../../src/plugin/context.js';
import { PluginError } from '../../../src/plugin/errors.js';

const NOW = Date.parse('2026-12-02T10:00:00Z');

function context(spec: Record<string, unknown>): PluginContext & { printed: string[] } {
  const printed: string[] = [];
  const stdin = dump({ apiVersion: 'secondcron.io/v1', kind: 'SecondCronJob', metadata: { name: 'hb', namespace: 'ns' }, spec: { jobTemplate: { spec: {} }, ...spec } });
  return { printed, out: (t) => void printed.push(t), raw: (t) => void printed.push(t), warn: () => undefined, nowMs: () => NOW, random: () => 0.5, readStdin: () => stdin, target: () => Promise.reject(new Error('--local needs no cluster')) };
}

test('validate --local: a schedules list and a window are judged by the operator\'s own schedule math', async () => {
  const ok = context({ schedules: ['0 30 8 * * MON-FRI', '0 0 10 * * SAT,SUN'], timeZone: 'Europe/Berlin', notBefore: '2027-01-01T00:00:00Z' });
  await validateCommand({ files: ['-'], local: true }, ok);
  assert.match(ok.printed[0] ?? '', /: valid \(local: .*\): cron union of 2 \["0 30 8 \* \* MON-FRI", "0 0 10 \* \* SAT,SUN"\] in Europe\/Berlin, only from 2027-01-01T00:00:00.000Z$/);

  const bad = context({ schedules: ['0 * * * * *', '61 * * * * *'] });
  await assert.rejects(validateCommand({ files: ['-'], local: true }, bad), (e: unknown) => e instanceof PluginError && e.message === '1 of 1 SecondCronJob(s) invalid');
  assert.match(bad.printed[0] ?? '', /INVALID\n {2}Schedule: InvalidSchedule: schedules\[1\]: schedule "61 \* \* \* \* \*": second field/);

  const window = context({ intervalSeconds: 5, notBefore: '2027-01-01T00:00:00Z', notAfter: '2026-01-01T00:00:00Z' });
  await assert.rejects(validateCommand({ files: ['-'], local: true }, window), PluginError);
  assert.match(window.printed[0] ?? '', /Schedule: InvalidSchedule: notAfter \(2026-01-01T00:00:00Z\) must be later than notBefore \(2027-01-01T00:00:00Z\)/);
});
