import assert from 'node:assert/strict';
import { test } from 'node:test';

import { type CronJob, fromCronJob } from '../../../src/plugin/cronjob-conversion.js';
import { PluginError } from '../../../src/plugin/errors.js';

const template = {
  metadata: { labels: { team: 'a' }, creationTimestamp: null },
  spec: { backoffLimit: 2, template: { metadata: { creationTimestamp: null }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i', resources: {} }] } } },
};

function cronJob(spec: Partial<CronJob['spec']>, name = 'nightly'): CronJob {
  return { metadata: { name, namespace: 'ops', labels: { app: 'x' } }, spec: { schedule: '0 3 * * *', jobTemplate: template as unknown as CronJob['spec']['jobTemplate'], ...spec } };
}

test('schedule (5 fields = second 0), zone, policies, limits and template carry over; nulls are dropped', () => {
  const { manifest, warnings } = fromCronJob(
    cronJob({ timeZone: 'Europe/Berlin', concurrencyPolicy: 'Forbid', startingDeadlineSeconds: 30, successfulJobsHistoryLimit: 5, failedJobsHistoryLimit: 2 }),
  );
  assert.deepEqual(warnings, []);
  assert.equal(manifest.apiVersion, 'secondcron.io/v1');
  assert.equal(manifest.kind, 'SecondCronJob');
  assert.deepEqual(manifest.metadata, { name: 'nightly', namespace: 'ops', labels: { app: 'x' } });
  assert.deepEqual(
    { ...manifest.spec, jobTemplate: undefined },
    { schedule: '0 3 * * *', timeZone: 'Europe/Berlin', concurrencyPolicy: 'Forbid', startingDeadlineSeconds: 30, successfulJobsHistoryLimit: 5, failedJobsHistoryLimit: 2, jobTemplate: undefined },
  );
  assert.deepEqual(manifest.spec.jobTemplate, {
    metadata: { labels: { team: 'a' } },
    spec: { backoffLimit: 2, template: { metadata: {}, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i', resources: {} }] } } },
  });
});

test('warnings: Vixie vs robfig day rule, a zone inside the schedule, deadline 0, a suspended source', () => {
  const days = fromCronJob(cronJob({ schedule: '0 0 */2 * 1-5' }));
  assert.equal(days.warnings.length, 1);
  assert.match(days.warnings[0] as string, /BOTH .* EITHER/);
  const tz = fromCronJob(cronJob({ schedule: 'CRON_TZ=Asia/Tokyo 0 9 * * *' }));
  assert.equal(tz.manifest.spec.schedule, '0 9 * * *');
  assert.equal(tz.manifest.spec.timeZone, 'Asia/Tokyo');
  assert.match(tz.warnings[0] as string, /became spec.timeZone/);
  const zero = fromCronJob(cronJob({ startingDeadlineSeconds: 0, suspend: true }));
  assert.equal(zero.manifest.spec.startingDeadlineSeconds, 1);
  assert.equal(zero.manifest.spec.suspend, true);
  assert.equal(zero.warnings.length, 2);
});

test('what cannot be migrated is an error, not a surprise', () => {
  assert.throws(() => fromCronJob(cronJob({ schedule: '@every 5m' })), (e: unknown) => e instanceof PluginError && /intervalSeconds/.test(e.message));
  assert.throws(() => fromCronJob(cronJob({ schedule: '0 25 * * *' })), (e: unknown) => e instanceof PluginError && /hour field/.test(e.message));
  assert.throws(() => fromCronJob(cronJob({}, 'x'.repeat(53))), (e: unknown) => e instanceof PluginError && /at most 52/.test(e.message));
});
