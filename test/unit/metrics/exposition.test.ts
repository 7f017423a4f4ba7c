// /metrics as served: streamed and gzipped from cached pieces, yet byte for byte the text main rendered
// before (exposition-before-issue-24.ts), after any sequence of adds, edits and deletes; `name[]`
// restricts the families; a gzip scrape re-compresses only the blocks that changed.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describe, test } from 'node:test';
import { crc32, gunzipSync } from 'node:zlib';

import type { SecondCronJob } from '../../../src/api/resources.js';
import { serveMetrics } from '../../../src/http/servers.js';
import { MetricsExposition } from '../../../src/metrics/exposition.js';
import { GZIP_HEADER, crc32Combine, gzipTrailer } from '../../../src/metrics/gzip-pieces.js';
import { Metrics } from '../../../src/metrics/metrics.js';
import { SCHEDULE_METRIC_NAMES, ScheduleGauges } from '../../../src/metrics/schedule-gauges.js';
import { scj } from '../controller/fixtures.js';
import { ReferenceGauges } from './exposition-before-issue-24.js';

/** Deterministic pseudo-random numbers (mulberry32), so a failure replays. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function schedule(i: number, version: number): SecondCronJob {
  const s = scj(i % 3 === 0 ? { schedule: `${i % 60} * * * * *`, intervalSeconds: undefined, timeZone: 'Europe/Berlin' } : { intervalSeconds: 1 + (i % 7), suspend: version % 2 === 1 }, {
    name: `s-${i}`,
    namespace: `ns-${i % 4}`,
    uid: `u-${i}`,
  });
  if (version > 0) {
    s.status = {
      lastScheduleTime: new Date(Date.UTC(2026, 11, 3, 10, 0, version)).toISOString(),
      ...(i % 2 ? { nextScheduleTime: new Date(Date.UTC(2026, 11, 3, 10, 1, version)).toISOString() } : {}),
      conditions: [{ type: 'Ready', status: version % 3 ? 'True' : 'False', reason: 'Scheduled', message: '', lastTransitionTime: '2026-12-03T10:00:00Z' }],
    };
  }
  return s;
}

/** The same random adds, edits and deletes applied to both. */
function churn(steps: number, seed: number, ...targets: { set(s: SecondCronJob): void; delete(s: SecondCronJob): void }[]): void {
  const random = rng(seed);
  const live = new Map<number, number>(); // schedule → version
  for (let step = 0; step < steps; step++) {
    const i = Math.floor(random() * (steps / 3));
    const r = random();
    if (live.has(i) && r < 0.35) {
      const s = schedule(i, live.get(i) ?? 0);
      live.delete(i);
      for (const t of targets) t.delete(s);
    } else {
      const version = (live.get(i) ?? -1) + 1;
      live.set(i, version);
      for (const t of targets) t.set(schedule(i, version));
    }
  }
}

function get(port: number, path: string, encoding: string): Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { 'accept-encoding': encoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('/metrics exposition', () => {
  test('gzip and plain answers equal the text rendered before issue 24, byte for byte, after churn', async () => {
    const metrics = new Metrics(false);
    metrics.jobsCreated.inc({ result: 'created' }, 7);
    const gauges = new ScheduleGauges();
    const reference = new ReferenceGauges();
    const server = await serveMetrics(0, new MetricsExposition(metrics.registry, gauges));
    try {
      for (const [steps, seed] of [[3_000, 1], [20_000, 2]] as const) {
        churn(steps, seed, gauges, reference);
        const expected = (await metrics.registry.metrics()) + reference.render();
        assert.ok(expected.length > 100_000, `a body of several write batches (${expected.length} bytes)`);
        const zipped = await get(server.port, '/metrics', 'gzip');
        assert.equal(zipped.headers['content-encoding'], 'gzip');
        assert.equal(zipped.headers['content-type'], metrics.registry.contentType);
        assert.equal(gunzipSync(zipped.body).toString(), expected); // gunzip checks the CRC and length too
        assert.ok(zipped.body.length < expected.length / 10, `compressed: ${zipped.body.length} of ${expected.length}`);
        const plain = await get(server.port, '/metrics', 'identity');
        assert.equal(plain.headers['content-encoding'], undefined);
        assert.equal(plain.body.toString(), expected);
      }
    } finally {
      await server.close();
    }
  });

  test('name[] answers only the named families, in registry order, gzipped or not', async () => {
    const metrics = new Metrics(false);
    const gauges = new ScheduleGauges();
    const reference = new ReferenceGauges();
    churn(300, 3, gauges, reference);
    const server = await serveMetrics(0, new MetricsExposition(metrics.registry, gauges));
    try {
      const family = (text: string, name: string): string => text.slice(text.indexOf(`# HELP ${name} `)).split(/(?=# HELP )/)[0] as string;
      const expected =
        `${await metrics.registry.getSingleMetricAsString('secondcron_schedules')}\n${await metrics.registry.getSingleMetricAsString('secondcron_leader')}\n` +
        family(reference.render(), 'secondcron_schedule_ready');
      const path = '/metrics?name[]=secondcron_leader&name[]=secondcron_schedule_ready&name[]=secondcron_schedules&name[]=no_such_metric';
      assert.equal(gunzipSync((await get(server.port, path, 'gzip')).body).toString(), expected);
      assert.equal((await get(server.port, path, 'identity')).body.toString(), expected);
      assert.equal((await get(server.port, '/metrics?name[]=no_such_metric', 'gzip')).body.length > 0, true);
      assert.equal(gunzipSync((await get(server.port, '/metrics?name[]=no_such_metric', 'gzip')).body).toString(), '');
    } finally {
      await server.close();
    }
  });

  test('a gzip scrape compresses again only the pieces (block × family) whose lines changed', () => {
    const gauges = new ScheduleGauges();
    for (let i = 0; i < 1_000; i++) gauges.set(schedule(i, 1));
    const first = gauges.deflated();
    const again = gauges.deflated();
    assert.equal(again.filter((p, i) => p === first[i]).length, first.length, 'nothing changed: every piece reused');
    const edited = schedule(500, 1);
    edited.status = { ...edited.status, lastScheduleTime: '2026-12-03T11:00:00Z' };
    gauges.set(edited);
    const afterEdit = gauges.deflated();
    assert.equal(afterEdit.length, first.length);
    assert.equal(afterEdit.filter((p, i) => p !== first[i]).length, 1, 'one block, one family (last schedule)');
    gauges.set(schedule(1_000, 1));
    const afterAdd = gauges.deflated();
    assert.equal(afterAdd.length, first.length);
    assert.equal(afterAdd.filter((p, i) => p !== afterEdit[i]).length, SCHEDULE_METRIC_NAMES.length, 'the last block, every family');
  });

  test('an edit of the schedule alone (the info labels, no value) compresses that block\'s info piece again', () => {
    const gauges = new ScheduleGauges();
    const reference = new ReferenceGauges();
    for (let i = 0; i < 300; i++) for (const g of [gauges, reference]) g.set(schedule(i, 1));
    const first = gauges.deflated();
    const edited = schedule(3, 1); // a cron schedule (i % 3 === 0)
    edited.spec = { ...edited.spec, schedule: '7 * * * * *' };
    for (const g of [gauges, reference]) g.set(edited);
    const after = gauges.deflated();
    assert.equal(after.length, first.length);
    assert.equal(after.filter((p, i) => p !== first[i]).length, 1, 'one block, one family (info)');
    const text = gunzipSync(Buffer.concat([GZIP_HEADER, ...after.map((p) => p.data), gzipTrailer(after)])).toString();
    assert.equal(text, reference.render());
    assert.ok(text.includes('secondcron_schedule_info{namespace="ns-3",name="s-3",schedule="7 * * * * *",'), 'the new schedule label');
  });

  test('crc32Combine equals the CRC-32 of the concatenation', () => {
    const random = rng(4);
    const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256)));
    for (const [a, b] of [[0, 0], [0, 5], [5, 0], [1, 1], [100, 3], [3, 70_000], [65_537, 12_345]] as const) {
      const x = bytes(a);
      const y = bytes(b);
      assert.equal(crc32Combine(crc32(x), crc32(y), y.length), crc32(Buffer.concat([x, y])), `${a} + ${b}`);
    }
  });
});
