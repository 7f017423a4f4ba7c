// The latency split at the API server's door (bench/lib/latency-split.ts): the create's
// requestReceivedTimestamp (µs kept) between the slot and the watch arrival; only completed,
// successful, non-dry-run Job creates of the namespaces asked for; a Job without one is counted apart.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { auditedJobCreates, preciseMs, splitFrom } from '../../../bench/lib/latency-split.js';

const create = (o: { ns: string; name?: string; at: string; code?: number; stage?: string; uri?: string; resource?: string }): string =>
  JSON.stringify({
    kind: 'Event',
    level: 'Metadata',
    auditID: `${o.ns}-${o.name ?? ''}-${o.at}`,
    stage: o.stage ?? 'ResponseComplete',
    requestURI: o.uri ?? `/apis/batch/v1/namespaces/${o.ns}/jobs`,
    verb: 'create',
    objectRef: { resource: o.resource ?? 'jobs', namespace: o.ns, ...(o.name ? { name: o.name } : {}), apiGroup: 'batch', apiVersion: 'v1' },
    responseStatus: { code: o.code ?? 201 },
    requestReceivedTimestamp: o.at,
  });

test('preciseMs keeps the microseconds Date.parse drops', () => {
  assert.equal(preciseMs('2026-12-03T10:00:00.123456Z'), Date.parse('2026-12-03T10:00:00Z') + 123.456);
  assert.equal(preciseMs('2026-12-03T10:00:00Z'), Date.parse('2026-12-03T10:00:00Z'));
});

test('auditedJobCreates: the 201 creates of the namespaces asked for, dry runs and other resources left out', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'split-test-'));
  try {
    const path = join(dir, 'audit.log');
    writeFileSync(
      path,
      [
        create({ ns: 'a', name: 'j1', at: '2026-12-03T10:00:00.005000Z' }),
        create({ ns: 'a', name: 'j2', at: '2026-12-03T10:00:00.007500Z', code: 409 }),
        create({ ns: 'a', at: '2026-12-03T10:00:00.008000Z', uri: '/apis/batch/v1/namespaces/a/jobs?dryRun=All' }),
        create({ ns: 'a', name: 'j3', at: '2026-12-03T10:00:00.009000Z', uri: '/apis/batch/v1/namespaces/a/jobs?dryRun=All' }),
        create({ ns: 'a', name: 'e1', at: '2026-12-03T10:00:00.010000Z', resource: 'events' }),
        create({ ns: 'b', name: 'j1', at: '2026-12-03T10:00:00.011000Z' }),
        '{"cut short',
      ].join('\n'),
    );
    const got = await auditedJobCreates(path, new Set(['a']));
    assert.deepEqual([...got], [['a/j1', Date.parse('2026-12-03T10:00:00Z') + 5]]);
    await assert.rejects(auditedJobCreates(join(dir, 'none.log'), new Set(['a'])), /no audit log/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('splitFrom: due → received is the client share, received → watch the server share; unmatched Jobs counted apart', () => {
  const received = new Map([
    ['a/j1', 1_005],
    ['a/j2', 1_020],
  ]);
  const { split: s, clientMs } = splitFrom(received, [
    { namespace: 'a', name: 'j1', dueMs: 1_000, arrivedMs: 1_050 },
    { namespace: 'a', name: 'j2', dueMs: 1_000, arrivedMs: 1_030 },
    { namespace: 'a', name: 'j9', dueMs: 1_000, arrivedMs: 1_040 },
  ]);
  assert.equal(s.jobs, 2);
  assert.equal(s.unmatched, 1);
  assert.deepEqual(s.client, { p50_ms: 5, p99_ms: 20, max_ms: 20 });
  assert.deepEqual(s.server, { p50_ms: 10, p99_ms: 45, max_ms: 45 });
  assert.deepEqual(clientMs, [5, 20]);
});
