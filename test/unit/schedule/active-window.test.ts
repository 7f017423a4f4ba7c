// spec.notBefore / notAfter: no slot outside the window, and the window's state for the Ready reason.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ActiveWindow, compileResourceSchedule, compileSchedule, type ScheduleSpec, latestSlotAtOrBefore, nextWindowChangeMs, windowState } from '../../../src/schedule/index.js';
import { parseActiveWindow } from '../../../src/schedule/active-window.js';
import { firstSlots, iso, ms, slotsBetween, source } from './helpers.js';

const NOW = ms('2026-12-02T10:00:00Z');

describe('a window limits the slots', () => {
  it('no slot before notBefore or after notAfter; both ends inclusive', () => {
    const src = source({ schedule: '*/10 * * * * *', notBefore: '2026-12-02T10:00:20Z', notAfter: '2026-12-02T10:01:00Z' }, '2026-12-02T10:00:00Z');
    const slots = slotsBetween(src, ms('2026-12-02T09:00:00Z'), ms('2026-12-02T11:00:00Z')).map(iso);
    assert.deepEqual(slots, ['2026-12-02T10:00:20.000Z', '2026-12-02T10:00:30.000Z', '2026-12-02T10:00:40.000Z', '2026-12-02T10:00:50.000Z', '2026-12-02T10:01:00.000Z']);
  });

  it('next from long before the window is its first slot (the scheduler arms nothing earlier)', () => {
    const src = source({ intervalSeconds: 60, notBefore: '2027-01-01T00:00:30.500Z' }, '2026-12-02T10:00:00Z', '2026-12-02T10:00:00Z');
    assert.deepEqual(firstSlots(src, '2026-12-02T10:00:00Z', 2), ['2027-01-01T00:01:00.000Z', '2027-01-01T00:02:00.000Z']);
  });

  it('after notAfter there is no next slot, and none is due', () => {
    const src = source({ schedule: '* * * * * *', notAfter: '2026-12-02T10:00:05Z' }, '2026-12-02T10:00:00Z');
    assert.equal(src.next(ms('2026-12-02T10:00:05Z')), null);
    assert.equal(src.next(ms('2026-12-02T10:00:04.999Z')), ms('2026-12-02T10:00:05Z'));
    assert.equal(latestSlotAtOrBefore(src, ms('2026-12-03T00:00:00Z'), ms('2026-12-02T10:00:00Z')), ms('2026-12-02T10:00:05Z'));
    assert.equal(latestSlotAtOrBefore(src, ms('2026-12-03T00:00:00Z'), ms('2026-12-02T10:00:05Z')), null);
  });

  it('applies to lists and to intervals alike', () => {
    const list = source({ schedules: ['0 * * * * *', '30 * * * * *'], notBefore: '2026-12-02T10:00:31Z', notAfter: '2026-12-02T10:02:00Z' }, '2026-12-02T10:00:00Z');
    assert.deepEqual(slotsBetween(list, NOW, NOW + 3_600_000).map(iso), ['2026-12-02T10:01:00.000Z', '2026-12-02T10:01:30.000Z', '2026-12-02T10:02:00.000Z']);
    const interval = source({ intervalSeconds: 7, notAfter: '2026-12-02T10:00:20Z' }, '2026-12-02T10:00:00Z', '2026-12-02T10:00:00Z');
    assert.deepEqual(slotsBetween(interval, NOW, NOW + 3_600_000).map(iso), ['2026-12-02T10:00:07.000Z', '2026-12-02T10:00:14.000Z']);
  });

  it('a window that has ended compiles (WindowEnded, not InvalidSchedule), and exposes the window', () => {
    const ended = compileSchedule({ schedule: '* * * * * *', notBefore: '2026-01-01T00:00:00Z', notAfter: '2026-02-01T00:00:00Z' }, NOW, NOW, 'a/b');
    assert.ok(ended.ok);
    assert.deepEqual(ended.window, { notBeforeMs: ms('2026-01-01T00:00:00Z'), notAfterMs: ms('2026-02-01T00:00:00Z') });
    assert.equal(ended.source.next(NOW), null);
    assert.equal(ended.describe, 'cron "* * * * * *" in UTC, only from 2026-01-01T00:00:00.000Z until 2026-02-01T00:00:00.000Z');
    const none = compileSchedule({ schedule: '* * * * * *' }, NOW, NOW, 'a/b');
    assert.ok(none.ok);
    assert.equal(none.window, undefined);
  });

  it('rejects a malformed or empty window', () => {
    const cases: Array<[ScheduleSpec, string]> = [
      [{ schedule: '* * * * * *', notBefore: 'tomorrow' }, 'notBefore must be an RFC 3339 time such as "2027-01-01T00:00:00Z", got "tomorrow"'],
      [{ schedule: '* * * * * *', notAfter: '2027-01-01' }, 'notAfter must be an RFC 3339 time such as "2027-01-01T00:00:00Z", got "2027-01-01"'],
      [{ schedule: '* * * * * *', notBefore: '2027-01-01T00:00:00Z', notAfter: '2027-01-01T00:00:00Z' }, 'notAfter (2027-01-01T00:00:00Z) must be later than notBefore (2027-01-01T00:00:00Z)'],
      [{ schedule: '* * * * * *', notBefore: '2027-01-02T00:00:00+01:00', notAfter: '2027-01-01T22:00:00Z' }, 'notAfter (2027-01-01T22:00:00Z) must be later than notBefore (2027-01-02T00:00:00+01:00)'],
    ];
    for (const [spec, message] of cases) {
      const result = compileSchedule(spec, NOW, NOW, 'a/b');
      assert.deepEqual(result, { ok: false, reason: 'InvalidSchedule', message }, JSON.stringify(spec));
    }
  });

  it('parses offsets and fractions as Kubernetes writes them', () => {
    assert.deepEqual(parseActiveWindow('2027-01-01T01:00:00+01:00', '2027-01-01T00:00:01.5Z'), { ok: true, window: { notBeforeMs: ms('2027-01-01T00:00:00Z'), notAfterMs: ms('2027-01-01T00:00:01.500Z') } });
    assert.deepEqual(parseActiveWindow(undefined, null), { ok: true, window: undefined });
  });
});

describe('windowState and nextWindowChangeMs', () => {
  const window: ActiveWindow = { notBeforeMs: ms('2027-01-01T00:00:00Z'), notAfterMs: ms('2027-03-31T23:59:59Z') };
  const cases: Array<[string, ActiveWindow | undefined, string, string, string | null]> = [
    ['before', window, '2026-12-31T23:59:59.999Z', 'NotYetActive', '2027-01-01T00:00:00.000Z'],
    ['at notBefore', window, '2027-01-01T00:00:00Z', 'Active', '2027-03-31T23:59:59.001Z'],
    ['at notAfter', window, '2027-03-31T23:59:59Z', 'Active', '2027-03-31T23:59:59.001Z'],
    ['just after notAfter', window, '2027-03-31T23:59:59.001Z', 'WindowEnded', null],
    ['no window', undefined, '2027-01-01T00:00:00Z', 'Active', null],
    ['only notBefore, after it', { notBeforeMs: ms('2027-01-01T00:00:00Z') }, '2028-01-01T00:00:00Z', 'Active', null],
    ['only notAfter, before it', { notAfterMs: ms('2027-01-01T00:00:00Z') }, '2026-01-01T00:00:00Z', 'Active', '2027-01-01T00:00:00.001Z'],
  ];
  for (const [what, w, now, state, change] of cases) {
    it(what, () => {
      assert.equal(windowState(w, ms(now)), state);
      assert.equal(iso(nextWindowChangeMs(w, ms(now))), change);
    });
  }
  it('the state after nextWindowChangeMs differs from the state before it', () => {
    for (const t of ['2026-06-01T00:00:00Z', '2027-02-01T00:00:00Z']) {
      const change = nextWindowChangeMs(window, ms(t));
      assert.ok(change !== null);
      assert.notEqual(windowState(window, change), windowState(window, ms(t)));
      assert.equal(windowState(window, change - 1), windowState(window, ms(t)));
    }
  });
});

describe('compileResourceSchedule: every scheduling field of a resource, as operator and plugin compile it', () => {
  it('passes schedules, timeZone and the window, and hashes H from namespace/name', () => {
    const resource = {
      metadata: { name: 'heartbeat', namespace: 'default', creationTimestamp: '2026-12-01T00:00:00Z' },
      spec: { schedules: ['H * * * * *', '0 0 12 * * *'], timeZone: 'Europe/Berlin', notBefore: '2026-12-02T10:00:30Z' },
    };
    const viaResource = compileResourceSchedule(resource, NOW);
    const direct = compileSchedule({ ...resource.spec }, ms('2026-12-01T00:00:00Z'), NOW, 'default/heartbeat');
    assert.ok(viaResource.ok && direct.ok);
    assert.deepEqual(viaResource.resolvedSchedules, ['26 * * * * *', '0 0 12 * * *']);
    assert.deepEqual(firstSlots(viaResource.source, '2026-12-02T10:00:00Z', 3), firstSlots(direct.source, '2026-12-02T10:00:00Z', 3));
    assert.equal(viaResource.source.next(NOW), ms('2026-12-02T10:01:26Z'), 'H resolved to 26; 10:00:26 is before notBefore');
  });
});
