// The bench's outside count of the operator's requests (bench/lib/audit-log.ts): each request once
// (a watch logs two stages), only the operator's user agent, only what the server received in the window.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { auditedRequests } from '../../../bench/lib/audit-log.js';

const event = (id: string, stage: string, verb: string, resource: string, agent: string, at: string, subresource?: string, extra: Record<string, string> = {}): string =>
  JSON.stringify({
    kind: 'Event',
    level: 'Metadata',
    auditID: id,
    stage,
    verb,
    userAgent: agent,
    requestReceivedTimestamp: at,
    ...extra,
    objectRef: { resource, ...(subresource ? { subresource } : {}) },
  });

test('auditedRequests: one per request, by verb and resource, the agent and the window only', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'audit-test-'));
  try {
    const ours = 'secondcron/0.1.0 (bench-bench-steady)';
    const path = join(dir, 'audit.log');
    writeFileSync(
      path,
      [
        event('a', 'ResponseComplete', 'create', 'jobs', ours, '2026-12-03T10:00:00.100Z', undefined, { stageTimestamp: '2026-12-03T10:00:00.112Z' }),
        event('h', 'ResponseComplete', 'create', 'jobs', ours, '2026-12-03T10:00:00.150Z', undefined, { stageTimestamp: '2026-12-03T10:00:00.154Z', requestURI: '/apis/batch/v1/namespaces/a/jobs?dryRun=All' }),
        event('b', 'ResponseComplete', 'delete', 'jobs', ours, '2026-12-03T10:00:00.200Z'),
        event('c', 'ResponseStarted', 'watch', 'jobs', ours, '2026-12-03T10:00:00.300Z'),
        event('c', 'ResponseComplete', 'watch', 'jobs', ours, '2026-12-03T10:00:00.300Z'),
        event('d', 'ResponseComplete', 'patch', 'secondcronjobs', ours, '2026-12-03T10:00:00.400Z', 'status'),
        event('e', 'ResponseComplete', 'create', 'jobs', 'secondcron/0.1.0 (bench-bench-light)', '2026-12-03T10:00:00.500Z'),
        event('f', 'ResponseComplete', 'create', 'jobs', ours, '2026-12-03T09:59:59.999Z'),
        event('g', 'ResponseComplete', 'create', 'jobs', ours, '2026-12-03T10:00:01.000Z'),
        '',
      ].join('\n'),
    );
    const got = await auditedRequests(path, '(bench-bench-steady)', Date.parse('2026-12-03T10:00:00Z'), Date.parse('2026-12-03T10:00:01Z'));
    assert.deepEqual(got, {
      total: 5,
      by: { 'create jobs': 1, 'create jobs (dry run)': 1, 'delete jobs': 1, 'watch jobs': 1, 'patch secondcronjobs/status': 1 },
      server_ms_mean: { 'create jobs': 12, 'create jobs (dry run)': 4 },
    });
    await assert.rejects(auditedRequests(join(dir, 'none.log'), 'x', 0, 1), /no audit log/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
