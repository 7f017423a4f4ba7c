import assert from 'node:assert/strict';
import { test } from 'node:test';

import { writeStatus } from '../../../src/controller/status-writer.js';
import { FakeRest } from '../fakes/fake-rest.js';
import { scj } from './fixtures.js';

test('status goes to the status subresource as a merge patch; fields no longer wanted are nulled', async () => {
  const rest = new FakeRest().on('patch', /\/status$/, () => ({ metadata: {} }));
  const cached = scj({}, {});
  cached.status = { lastScheduleTime: '2026-12-02T10:00:01Z', nextScheduleTime: '2026-12-02T10:00:02Z', activeCount: 1 };
  await writeStatus(rest, cached, { lastScheduleTime: '2026-12-02T10:00:02Z', activeCount: 0 });
  const [req] = rest.requests;
  assert.equal(req?.path, '/apis/secondcron.io/v1/namespaces/ns/secondcronjobs/hb/status');
  assert.equal(req?.patchType, 'merge');
  assert.deepEqual(req?.body, { status: { lastScheduleTime: '2026-12-02T10:00:02Z', activeCount: 0, nextScheduleTime: null } });
});
