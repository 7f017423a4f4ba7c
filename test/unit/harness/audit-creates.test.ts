// The integration tests' outside count of Job creates (test/integration/helpers/audit-creates.ts) on a
// small synthetic audit log: what is kept (completed, non-dry-run creates and deletes of batch Jobs),
// and what is judged a problem (a second 201 for one name, an unprovoked 409).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  type AuditedJobWrite,
  createCodesByName,
  createProblems,
  describeJobWrites,
  ownerOfJobName,
  replaceOrderProblems,
  resentAfterSupersedingRefusal,
  parseAuditJobReads,
  parseAuditJobWrites,
  selectJobWrites,
  slotOfJobName,
  storedJobNames,
  supersededCreateProblems,
} from '../../integration/helpers/audit-creates.js';

const OPERATOR = 'secondcron/0.1.0 (replica-0)';

function event(o: {
  id: string;
  stage?: string;
  verb?: string;
  ns?: string;
  name?: string;
  code?: number;
  user?: string;
  agent?: string;
  uri?: string;
  resource?: string;
  group?: string;
  subresource?: string;
  at?: string;
}): string {
  const ns = o.ns ?? 'ns1';
  const resource = o.resource ?? 'jobs';
  return JSON.stringify({
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: 'Metadata',
    auditID: o.id,
    stage: o.stage ?? 'ResponseComplete',
    requestURI: o.uri ?? `/apis/batch/v1/namespaces/${ns}/jobs`,
    verb: o.verb ?? 'create',
    user: { username: o.user ?? 'admin', groups: ['system:masters', 'system:authenticated'] },
    sourceIPs: ['127.0.0.1'],
    userAgent: o.agent ?? OPERATOR,
    objectRef: { resource, namespace: ns, name: o.name, apiGroup: o.group ?? 'batch', apiVersion: 'v1', ...(o.subresource ? { subresource: o.subresource } : {}) },
    responseStatus: { metadata: {}, code: o.code ?? 201 },
    requestReceivedTimestamp: o.at ?? '2026-12-04T17:00:00.100000Z',
    stageTimestamp: o.at ?? '2026-12-04T17:00:00.120000Z',
    annotations: { 'authorization.k8s.io/decision': 'allow' },
  });
}

const LOG = [
  event({ id: 'a1', name: 'tick-1733331600', at: '2026-12-04T17:00:00.100000Z' }),
  // the same slot created again later: a re-run (another uid)
  event({ id: 'a2', name: 'tick-1733331600', at: '2026-12-04T17:00:05.000000Z' }),
  event({ id: 'b1', name: 'tick-1733331601', code: 429, at: '2026-12-04T17:00:01.100000Z' }),
  event({ id: 'b2', name: 'tick-1733331601', at: '2026-12-04T17:00:02.100000Z' }),
  event({ id: 'c1', name: 'tick-1733331602', at: '2026-12-04T17:00:02.200000Z' }),
  event({ id: 'c2', name: 'tick-1733331602', code: 409, at: '2026-12-04T17:00:02.900000Z' }),
  // kept out: a dry run, the ResponseStarted stage, a repeated auditID, another namespace's, kubectl's,
  // a status subresource write, a create of another resource, and a line cut short
  event({ id: 'd1', name: 'tick-1733331603', uri: '/apis/batch/v1/namespaces/ns1/jobs?dryRun=All&fieldManager=secondcron' }),
  event({ id: 'e1', name: 'tick-1733331604', stage: 'ResponseStarted' }),
  event({ id: 'a1', name: 'tick-1733331600', at: '2026-12-04T17:00:00.100000Z' }),
  event({ id: 'f1', name: 'tick-1733331605', ns: 'other' }),
  event({ id: 'g1', name: 'manual-1', agent: 'kubectl/v1.34.0 (linux/amd64) kubernetes/abc' }),
  event({ id: 'h1', name: 'tick-1733331606', verb: 'update', subresource: 'status' }),
  event({ id: 'i1', name: 'tick-1733331607.1', resource: 'events', group: '' }),
  '{"kind":"Event","auditID":"z1","stage":"ResponseComplete","verb":"create","objectRef":{"resource":"jobs"',
  // a delete of the re-run slot's Job (Replace), accepted
  event({ id: 'j1', verb: 'delete', name: 'other-1733331600', code: 200, uri: '/apis/batch/v1/namespaces/ns1/jobs/other-1733331600', at: '2026-12-04T17:00:03.000000Z' }),
  event({ id: 'k1', name: 'other-1733331610', at: '2026-12-04T17:00:03.500000Z' }),
  '',
].join('\n');

test('parse: completed creates and deletes of batch Jobs, once per auditID, dry runs and other stages left out', () => {
  const writes = parseAuditJobWrites(LOG);
  assert.deepEqual(
    writes.map((w) => `${w.verb} ${w.namespace}/${w.name} ${w.code}`),
    [
      'create ns1/tick-1733331600 201',
      'create ns1/tick-1733331600 201',
      'create ns1/tick-1733331601 429',
      'create ns1/tick-1733331601 201',
      'create ns1/tick-1733331602 201',
      'create ns1/tick-1733331602 409',
      'create other/tick-1733331605 201',
      'create ns1/manual-1 201',
      'delete ns1/other-1733331600 200',
      'create ns1/other-1733331610 201',
    ],
  );
  const first = writes[0];
  assert.equal(first?.user, 'admin');
  assert.equal(first?.userAgent, OPERATOR);
  assert.equal(first?.receivedMs, Date.parse('2026-12-04T17:00:00.100Z'));
});

test('select: one namespace, the operator\'s User-Agent, owners and a window', () => {
  const writes = parseAuditJobWrites(LOG);
  const ns1 = selectJobWrites(writes, { namespace: 'ns1' });
  assert.equal(ns1.length, 8, 'not the other namespace, not kubectl');
  assert.equal(selectJobWrites(writes, { namespace: 'ns1', userAgentPrefix: 'kubectl/' }).length, 1);
  assert.equal(selectJobWrites(writes, { namespace: 'ns1', owners: ['other'] }).length, 2);
  assert.equal(selectJobWrites(writes, { namespace: 'ns1', user: 'someone-else' }).length, 0);
  const window = selectJobWrites(writes, { namespace: 'ns1', fromMs: Date.parse('2026-12-04T17:00:01Z'), toMs: Date.parse('2026-12-04T17:00:03Z') });
  assert.deepEqual(window.map((w) => w.auditID), ['b1', 'b2', 'c1', 'c2']);
});

test('codes per name, in the order received', () => {
  const codes = createCodesByName(selectJobWrites(parseAuditJobWrites(LOG), { namespace: 'ns1', owners: ['tick'] }));
  assert.deepEqual(Object.fromEntries(codes), { 'tick-1733331600': [201, 201], 'tick-1733331601': [429, 201], 'tick-1733331602': [201, 409] });
});

test('problems: a second 201 and an unprovoked 409 name their Jobs; a 429 then 201 is fine; an allowed 409 is fine', () => {
  const writes = selectJobWrites(parseAuditJobWrites(LOG), { namespace: 'ns1' });
  assert.deepEqual(createProblems(writes), [
    'tick-1733331600: created 2 times (codes 201,201)',
    'tick-1733331602: 409 AlreadyExists not provoked by the test (codes 201,409)',
  ]);
  assert.deepEqual(createProblems(writes, { allow409: (name) => name === 'tick-1733331602' }), ['tick-1733331600: created 2 times (codes 201,201)']);
  assert.deepEqual(createProblems(writes.filter((w) => w.name !== 'tick-1733331600' && w.name !== 'tick-1733331602')), []);
  assert.equal(describeJobWrites(writes), 'audit: 4 Job name(s) created; creates 201×5 409×1 429×1; deletes 200×1');
});

test('stored: a 201, or a 5xx create that a later delete found; not a 5xx nobody found, nor a 429 or a 409', () => {
  const w = (verb: 'create' | 'delete', name: string, code: number): AuditedJobWrite => ({ auditID: `${verb}-${name}-${code}`, verb, namespace: 'ns', name, code, user: 'u', userAgent: OPERATOR, receivedMs: 0, answeredMs: 0 });
  const writes = [
    w('create', 'a-1', 201),
    w('create', 'b-1', 504),
    w('delete', 'b-1', 200),
    w('create', 'c-1', 504),
    w('delete', 'c-1', 404),
    w('create', 'd-1', 429),
    w('delete', 'd-1', 200),
    w('create', 'e-1', 500),
  ];
  assert.deepEqual([...storedJobNames(writes)].sort(), ['a-1', 'b-1']);
});

test('Job names: owner and slot', () => {
  assert.equal(ownerOfJobName('my-scj-1733331600'), 'my-scj');
  assert.equal(slotOfJobName('my-scj-1733331600'), 1733331600_000);
  assert.equal(ownerOfJobName('nodigits'), undefined);
  assert.ok(Number.isNaN(slotOfJobName('nodigits')));
});

test('replaceOrderProblems: each create after the accepted delete of the Job before it', () => {
  const at = (s: number): string => new Date(Date.parse('2026-12-04T17:00:00Z') + s).toISOString();
  const log = [
    event({ id: '1', name: 'r-1733331600', at: at(0) }),
    event({ id: '2', verb: 'delete', name: 'r-1733331600', code: 200, at: at(3_900) }),
    event({ id: '3', name: 'r-1733331604', at: at(4_000) }),
    // the next create comes before its predecessor's delete was answered
    event({ id: '4', name: 'r-1733331608', at: at(8_000) }),
    event({ id: '5', verb: 'delete', name: 'r-1733331604', code: 200, at: at(8_100) }),
    // a refused delete does not count
    event({ id: '6', verb: 'delete', name: 'r-1733331608', code: 500, at: at(11_000) }),
    event({ id: '7', name: 'r-1733331612', at: at(12_000) }),
  ].join('\n');
  const writes = parseAuditJobWrites(log);
  assert.deepEqual(replaceOrderProblems(writes, 'r'), [
    'r-1733331608 created while r-1733331604 was active and not deleted first (its deletes: 200 answered 100 ms after)',
    'r-1733331612 created while r-1733331608 was active and not deleted first (its deletes: 500 answered -1000 ms after)',
  ]);
  assert.deepEqual(replaceOrderProblems(writes, 'r', (name) => name !== 'r-1733331604' && name !== 'r-1733331608'), []);
});

test('supersededCreateProblems: a create for an older slot after a newer slot\'s create, per schedule', () => {
  const creates = [
    { name: 'a-10', receivedMs: 1, status: 429 },
    { name: 'b-10', receivedMs: 2, status: 201 },
    { name: 'a-11', receivedMs: 3, status: 201 },
    { name: 'a-10', receivedMs: 4, status: 201 },
    { name: 'b-12', receivedMs: 5, status: 503 },
    { name: 'b-12', receivedMs: 6, status: 201 },
  ];
  assert.deepEqual(supersededCreateProblems(creates), ['a-10 sent (answered 201) after a-11, a newer slot\'s create']);
});

test('resentAfterSupersedingRefusal: a slot refused after the next one was due is never sent again', () => {
  const s = 1733331600_000;
  const records = [
    // refused 2.2 s after its slot (the next one due), then sent again: the late-429 defect
    { name: 'a-1733331600', receivedMs: s + 5, answeredMs: s + 2_200, status: 429 },
    { name: 'a-1733331600', receivedMs: s + 3_200, answeredMs: s + 3_210, status: 201 },
    // refused within its own period: retrying it is right
    { name: 'b-1733331600', receivedMs: s + 5, answeredMs: s + 600, status: 503 },
    { name: 'b-1733331600', receivedMs: s + 900, answeredMs: s + 910, status: 201 },
    // refused late, then a newer slot: fine
    { name: 'c-1733331600', receivedMs: s + 5, answeredMs: s + 2_400, status: 503 },
    { name: 'c-1733331602', receivedMs: s + 2_410, answeredMs: s + 2_420, status: 201 },
  ];
  assert.deepEqual(resentAfterSupersedingRefusal(records, 1_000), ['a-1733331600: refused 429 2200 ms after its slot (a newer slot due), sent again 1 time(s) (answered 201)']);
});

test('parseAuditJobReads: the completed reads of one Job by name, nothing else', () => {
  const uri = (name: string): string => `/apis/batch/v1/namespaces/ns1/jobs/${name}`;
  const log = [
    event({ id: 'r1', verb: 'get', name: 'tick-1733331600', code: 200, uri: uri('tick-1733331600'), user: 'system:serviceaccount:t:op', at: '2026-12-04T17:00:00.300000Z' }),
    event({ id: 'r2', verb: 'get', name: 'tick-1733331600', code: 404, uri: uri('tick-1733331600'), at: '2026-12-04T17:00:03.300000Z' }),
    // kept out: a list and a watch (no name), a create, a status read, the ResponseStarted stage, a repeat
    event({ id: 'r3', verb: 'list', code: 200, uri: '/apis/batch/v1/namespaces/ns1/jobs?limit=500' }),
    event({ id: 'r4', verb: 'watch', code: 200, uri: '/apis/batch/v1/namespaces/ns1/jobs?watch=true' }),
    event({ id: 'r5', name: 'tick-1733331601' }),
    event({ id: 'r6', verb: 'get', name: 'tick-1733331602', subresource: 'status', code: 200 }),
    event({ id: 'r7', verb: 'get', name: 'tick-1733331603', stage: 'ResponseStarted', code: 200 }),
    event({ id: 'r1', verb: 'get', name: 'tick-1733331600', code: 200, uri: uri('tick-1733331600'), user: 'system:serviceaccount:t:op', at: '2026-12-04T17:00:00.300000Z' }),
  ].join('\n');
  const reads = parseAuditJobReads(log);
  assert.deepEqual(reads.map((r) => [r.auditID, r.verb, r.name, r.code]), [['r1', 'get', 'tick-1733331600', 200], ['r2', 'get', 'tick-1733331600', 404]]);
  assert.deepEqual(selectJobWrites(reads, { namespace: 'ns1', user: 'system:serviceaccount:t:op' }).map((r) => r.auditID), ['r1']);
  assert.deepEqual(parseAuditJobWrites(log).map((w) => w.auditID), ['r5'], 'reads are not writes');
});
