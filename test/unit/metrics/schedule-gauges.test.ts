// The per-schedule gauges: what each SecondCronJob's status and spec become, the exposition text
// Prometheus parses (checked line by line), and removal with the resource.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { ScheduleGauges, SCHEDULE_METRIC_NAMES, scheduleRow } from '../../../src/metrics/schedule-gauges.js';
import { scj } from '../controller/fixtures.js';

const READY = { type: 'Ready', status: 'True' as const, reason: 'Scheduled', message: '', lastTransitionTime: '2026-12-02T10:00:00Z' };

function render(g: ScheduleGauges): string {
  return [...g.text()].join('');
}

/** name{labels} → value, for the sample lines of an exposition text; comments must be HELP/TYPE. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      assert.match(line, /^# (HELP|TYPE) secondcron_schedule_\w+ /, line);
      continue;
    }
    const m = /^(secondcron_schedule_\w+)(\{.*\}) (\S+)$/.exec(line);
    assert.ok(m, `sample line: ${line}`);
    assert.ok(!out.has(`${m[1]}${m[2]}`), `duplicate series ${m[1]}${m[2]}`);
    out.set(`${m[1]}${m[2]}`, Number(m[3]));
  }
  return out;
}

describe('scheduleRow', () => {
  test('maps status times to Unix seconds, Ready and suspend to 0/1, and the schedule to info labels', () => {
    const row = scheduleRow(
      scj(
        { schedule: '*/5 * * * * *', intervalSeconds: undefined, timeZone: 'Europe/Berlin', concurrencyPolicy: 'Forbid', suspend: true },
        { namespace: 'team-a', name: 'report' },
      ),
    );
    assert.deepEqual(row.labels, { namespace: 'team-a', name: 'report' });
    assert.deepEqual(row.info, {
      namespace: 'team-a',
      name: 'report',
      schedule: '*/5 * * * * *',
      interval_seconds: '',
      time_zone: 'Europe/Berlin',
      concurrency_policy: 'Forbid',
    });
    assert.equal(row.created, Date.parse('2026-12-02T10:00:00Z') / 1000);
    assert.equal(row.suspended, 1);
    assert.equal(row.ready, 0, 'no Ready condition written yet');
    assert.equal(row.lastSchedule, undefined);
    assert.equal(row.nextSchedule, undefined);
  });

  test('an interval schedule has no time zone; status fields come through', () => {
    const s = scj({ intervalSeconds: 30 });
    s.status = {
      lastScheduleTime: '2026-12-02T10:00:30Z',
      lastSuccessfulTime: '2026-12-02T10:00:31Z',
      nextScheduleTime: '2026-12-02T10:01:00Z',
      active: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'hb-1', namespace: 'ns', uid: 'u' }],
      conditions: [READY],
    };
    const row = scheduleRow(s);
    assert.deepEqual([row.info.schedule, row.info.interval_seconds, row.info.time_zone, row.info.concurrency_policy], ['', '30', '', 'Allow']);
    assert.equal(row.lastSchedule, Date.parse('2026-12-02T10:00:30Z') / 1000);
    assert.equal(row.lastSuccessful, Date.parse('2026-12-02T10:00:31Z') / 1000);
    assert.equal(row.nextSchedule, Date.parse('2026-12-02T10:01:00Z') / 1000);
    assert.equal(row.activeJobs, 1);
    assert.equal(row.ready, 1);
    assert.equal(row.suspended, 0);
  });

  test('Ready False and a cron schedule without a time zone (UTC, the default)', () => {
    const s = scj({ schedule: 'bogus', intervalSeconds: undefined });
    s.status = { conditions: [{ ...READY, status: 'False', reason: 'InvalidSchedule' }] };
    const row = scheduleRow(s);
    assert.equal(row.ready, 0);
    assert.equal(row.info.time_zone, 'UTC');
  });
});

describe('ScheduleGauges', () => {
  test('renders every family once, one series per schedule, absent values left out', () => {
    const g = new ScheduleGauges();
    const a = scj({ intervalSeconds: 5 }, { name: 'a', uid: 'ua' });
    a.status = { nextScheduleTime: '2026-12-02T10:00:05Z', queuedScheduleTime: '2026-12-02T10:00:03Z', conditions: [READY] };
    g.set(a);
    g.set(scj({ intervalSeconds: 7 }, { name: 'b', uid: 'ub' }));
    const text = render(g);
    for (const name of SCHEDULE_METRIC_NAMES) {
      assert.equal(text.split('\n').filter((l) => l === `# TYPE ${name} gauge`).length, 1, `${name} TYPE once`);
    }
    const s = samples(text);
    assert.equal(s.get('secondcron_schedule_next_schedule_timestamp_seconds{namespace="ns",name="a"}'), Date.parse('2026-12-02T10:00:05Z') / 1000);
    assert.equal(s.has('secondcron_schedule_next_schedule_timestamp_seconds{namespace="ns",name="b"}'), false, 'b has no nextScheduleTime');
    assert.equal(s.get('secondcron_schedule_queued_timestamp_seconds{namespace="ns",name="a"}'), Date.parse('2026-12-02T10:00:03Z') / 1000);
    assert.equal(s.has('secondcron_schedule_queued_timestamp_seconds{namespace="ns",name="b"}'), false, 'nothing waits for b');
    assert.equal(s.has('secondcron_schedule_last_successful_timestamp_seconds{namespace="ns",name="a"}'), false);
    assert.equal(s.get('secondcron_schedule_ready{namespace="ns",name="a"}'), 1);
    assert.equal(s.get('secondcron_schedule_ready{namespace="ns",name="b"}'), 0);
    assert.equal(
      s.get('secondcron_schedule_info{namespace="ns",name="b",schedule="",interval_seconds="7",time_zone="",concurrency_policy="Allow"}'),
      1,
    );
    // Every family for both, minus next and queued for b and last schedule/last success for both.
    assert.equal(s.size, 2 * SCHEDULE_METRIC_NAMES.length - 6);
  });

  test('an update replaces the series and a delete removes them all', () => {
    const g = new ScheduleGauges();
    const a = scj({}, { name: 'a' });
    g.set(a);
    g.set({ ...a, spec: { ...a.spec, suspend: true } });
    assert.equal(samples(render(g)).get('secondcron_schedule_suspended{namespace="ns",name="a"}'), 1);
    g.delete(a);
    assert.equal(samples(render(g)).size, 0);
  });

  test('label values are escaped as the exposition format requires', () => {
    const g = new ScheduleGauges();
    g.set(scj({ schedule: 'a"b\\c\nd', intervalSeconds: undefined }));
    const info = render(g).split('\n').find((l) => l.startsWith('secondcron_schedule_info{'));
    assert.ok(info?.includes('schedule="a\\"b\\\\c\\nd"'), info);
  });
});

describe('the kept gzip pieces', () => {
  test('hold their own bytes only: no piece pins a shared Buffer pool (Node 24 pools 64 KiB; the scale bench found 22 MiB held for 0.27 MiB of pieces at 10,000)', () => {
    const g = new ScheduleGauges();
    const at = (i: number, second: number) => {
      const s = scj({ intervalSeconds: 5 }, { name: `s-${i}`, uid: `u-${i}` });
      s.status = { nextScheduleTime: `2026-12-02T10:00:${String(second).padStart(2, '0')}Z`, conditions: [READY] };
      return s;
    };
    for (let i = 0; i < 2_000; i++) g.set(at(i, 5));
    g.deflated();
    // Status changes between scrapes: some blocks' pieces are made again, the others kept.
    for (let round = 0; round < 5; round++) {
      for (let i = round; i < 2_000; i += 7) g.set(at(i, 10 + round));
      g.deflated();
    }
    const pieces = g.deflated();
    const held = new Map<ArrayBufferLike, number>();
    for (const p of pieces) held.set(p.data.buffer, p.data.buffer.byteLength);
    const bytes = pieces.reduce((sum, p) => sum + p.data.length, 0);
    const heldBytes = [...held.values()].reduce((sum, n) => sum + n, 0);
    assert.equal(heldBytes, bytes, `${pieces.length} pieces of ${bytes} bytes hold ${heldBytes} bytes of buffers`);
  });
});
