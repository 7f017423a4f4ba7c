// The bench's per-Job accounting (bench/report/efficiency.ts, bench/scenarios/request-counts.ts):
// requests read by purpose when the operator labels them, by verb otherwise, and both turned into
// per-Job figures as rates over the steady window.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { PromSamples } from '../../../bench/lib/prom-text.js';
import { efficiency } from '../../../bench/report/efficiency.js';
import { failed, isFailed } from '../../../bench/report/results.js';
import type { FloorResult } from '../../../bench/scenarios/floor.js';
import { requestCounts } from '../../../bench/scenarios/request-counts.js';
import type { SteadyResult } from '../../../bench/scenarios/steady.js';

const scrape = (lines: string[]): PromSamples => new PromSamples(lines.join('\n') + '\n');

describe('requestCounts', () => {
  test('by purpose when the operator exports one, every series counted once', () => {
    const before = scrape([
      'secondcron_api_requests_total{verb="create",code="201",purpose="job_create"} 10',
      'secondcron_api_requests_total{verb="create",code="201",purpose="event"} 1',
    ]);
    const after = scrape([
      'secondcron_api_requests_total{verb="create",code="201",purpose="job_create"} 110',
      'secondcron_api_requests_total{verb="create",code="409",purpose="job_create"} 2',
      'secondcron_api_requests_total{verb="create",code="201",purpose="event"} 1',
      'secondcron_api_requests_total{verb="update",code="200",purpose="lease"} 5',
      'secondcron_api_requests_total{verb="watch",code="200",purpose="watch"} 1',
      'secondcron_jobs_created_total{result="created"} 100',
    ]);
    assert.deepEqual(requestCounts(after.since(before)), { total: 108, by: 'purpose', counts: { job_create: 102, lease: 5, watch: 1 } });
  });

  test('by verb when there is no purpose label', () => {
    const delta = scrape([
      'secondcron_api_requests_total{verb="create",code="201"} 40',
      'secondcron_api_requests_total{verb="create",code="error"} 1',
      'secondcron_api_requests_total{verb="delete",code="200"} 20',
    ]);
    assert.deepEqual(requestCounts(delta), { total: 61, by: 'verb', counts: { create: 41, delete: 20 } });
  });
});

describe('efficiency', () => {
  // 100 Jobs/s seen over 60 slots; the counters and CPU cover a 61 s window around them.
  const steady = {
    seen: 6000,
    seconds: 60,
    window: {
      seconds: 61,
      cpu_s: 12.2,
      requests: { total: 14640, by: 'purpose', counts: { job_create: 6100, job_delete: 6100, status: 2440 } },
      audited: { total: 14701, by: { 'create jobs': 6100, 'delete jobs': 6100, 'patch secondcronjobs/status': 2440, 'update leases': 61 } },
    },
  } as unknown as SteadyResult;
  const floor = { batches: { cpu_s_per_1000_creates: 1.5 } } as unknown as FloorResult;

  test('requests and CPU per Job are rates over the window, beside the floor client', () => {
    assert.deepEqual(efficiency(steady, floor), {
      requests_per_job: 2.4,
      requests_per_job_audited: 2.41,
      requests_audited_by: { 'create jobs': 1, 'delete jobs': 1, 'patch secondcronjobs/status': 0.4, 'update leases': 0.01 },
      requests_by_purpose: { job_create: 1, job_delete: 1, status: 0.4 },
      requests_by: 'purpose',
      history_deletes_per_job: 1,
      requests_per_s: 240,
      jobs_per_s: 100,
      cpu_s_per_1000_jobs: 2,
      floor_cpu_s_per_1000_creates: 1.5,
      cpu_vs_floor: 1.33,
    });
  });

  test('without an audit log: the counter alone, history deletes read from it', () => {
    const lagging = { ...steady, window: { seconds: 61, cpu_s: 12.2, requests: { total: 8540, by: 'verb', counts: { create: 6100, delete: 2440 } }, audited: null } } as SteadyResult;
    const e = efficiency(lagging, floor);
    assert.ok(!isFailed(e));
    assert.equal(e.requests_per_job, 1.4);
    assert.equal(e.requests_per_job_audited, null);
    assert.deepEqual(e.requests_audited_by, {});
    assert.equal(e.history_deletes_per_job, 0.4);
  });

  test('a failed floor leaves only the floor figures empty; a failed steady fails the section', () => {
    const noFloor = efficiency(steady, failed('floor', new Error('boom')));
    assert.ok(!isFailed(noFloor));
    assert.equal(noFloor.requests_per_job, 2.4);
    assert.equal(noFloor.floor_cpu_s_per_1000_creates, null);
    assert.equal(noFloor.cpu_vs_floor, null);
    const noSteady = efficiency(failed('steady', new Error('timed out')), floor);
    assert.ok(isFailed(noSteady));
    assert.equal(noSteady.error, 'needs the steady scenario: timed out');
    assert.equal(noSteady.requests_per_job, null);
  });
});
