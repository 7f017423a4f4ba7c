// Review amplification closed, on the real control plane: 5,000 distinct junk bearer tokens in 10 s
// from 50 connections against the operator's secure /metrics. The operator reaches the API server
// through a TLS-terminating tap (this file) that counts the TokenReviews and SubjectAccessReviews
// the API server receives and how many are open at once. Meanwhile a real Prometheus scrapes with a
// token bound to the metrics-reader role, and 20 schedules fire every second.
//
// Asserted: the API server never has more than the cap's worth (4) of reviews at a time; each junk
// request is answered 401 (its review ran) or 503 + Retry-After (over the cap), exactly as many
// reviews as 401s, the 503s counted by secondcron_metrics_auth_requests_total{result="throttled"};
// Prometheus scrapes successfully throughout. Reported (not asserted: a timed figure): the trigger
// latency p99 of the 20 schedules in the 10 s before the flood and during it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import { type IncomingMessage, type ServerResponse } from 'node:http';
import { type Server, createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { load as parseYaml } from 'js-yaml';
import { Agent, request } from 'undici';

import { installCrd } from '../cluster/crd.js';
import { selfSignedCertificate } from '../support/self-signed-cert.js';
import { type TestNamespace, kubectl, kubectlOk, operatorKubeconfig, uniqueNamespace } from './helpers/cluster-env.js';
import { eventually } from './helpers/eventually.js';
import { type OperatorProcess, startOperator } from './helpers/operator.js';
import { PrometheusServer } from './helpers/prometheus-server.js';
import { applyScj } from './helpers/scj.js';

const CAP = 4; // MAX_CONCURRENT_REVIEWS
const JUNK = 5_000;
const CONNECTIONS = 50;
const FLOOD_MS = 10_000;
const SCHEDULES = 20;

interface KubeconfigDoc {
  clusters: { cluster: { server: string; 'certificate-authority-data'?: string } }[];
  users: { user: { token?: string } }[];
}

/** Counts review requests on their way to the API server; everything else passes through untouched. */
class ReviewTap {
  open = 0;
  peak = 0;
  junkReviews = 0;
  /** TokenReviews of the known (Prometheus') token. */
  knownReviews = 0;
  private server: Server | undefined;
  private readonly upstream: Agent;

  constructor(
    private readonly apiServer: string,
    ca: Buffer,
    private readonly knownTokens: Set<string>,
  ) {
    this.upstream = new Agent({ connect: { ca } });
  }

  async start(cert: { cert: string; key: string }): Promise<string> {
    this.server = createServer(cert, (req, res) => void this.forward(req, res));
    await new Promise<void>((r) => this.server?.listen(0, '127.0.0.1', r));
    return `https://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const review = /\/(tokenreviews|subjectaccessreviews)$/.test((req.url ?? '').split('?')[0] ?? '');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    if (review) {
      this.peak = Math.max(this.peak, ++this.open);
      const token = (JSON.parse(body.toString('utf8')) as { spec?: { token?: string } }).spec?.token;
      if (token !== undefined && !this.knownTokens.has(token)) this.junkReviews++;
      if (token !== undefined && this.knownTokens.has(token)) this.knownReviews++;
    }
    // A watch the operator ends (or a stopped operator) ends its upstream request too.
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    try {
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length', 'transfer-encoding'].includes(k))) as Record<string, string>;
      const answer = await request(this.apiServer + (req.url ?? '/'), {
        method: req.method as 'GET',
        headers,
        body: body.length ? body : undefined,
        signal: gone.signal,
        dispatcher: this.upstream,
      });
      const out = Object.fromEntries(Object.entries(answer.headers).filter(([k]) => !['connection', 'transfer-encoding', 'keep-alive'].includes(k)));
      res.writeHead(answer.statusCode, out as Record<string, string>);
      if (review) {
        res.end(Buffer.from(await answer.body.arrayBuffer()));
      } else {
        for await (const chunk of answer.body) res.write(chunk); // watches stream
        res.end();
      }
    } catch {
      res.destroy();
    } finally {
      if (review) this.open--;
    }
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
    await this.upstream.destroy();
  }
}

/** Sum of the trigger-latency histogram buckets from /metrics text. */
function latencyBuckets(text: string): Map<number, number> {
  const buckets = new Map<number, number>();
  for (const m of text.matchAll(/^secondcron_trigger_latency_seconds_bucket\{le="([^"]+)"\} (\S+)$/gm)) {
    buckets.set(m[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(m[1]), Number(m[2]));
  }
  return buckets;
}

/** p99 of the observations between two histogram snapshots, interpolated within its bucket as histogram_quantile does. */
function p99Between(before: Map<number, number>, after: Map<number, number>): { p99: number; count: number } {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const delta = bounds.map((le) => (after.get(le) ?? 0) - (before.get(le) ?? 0));
  const count = delta.at(-1) ?? 0;
  const rank = 0.99 * count;
  for (let i = 0; i < bounds.length; i++) {
    if ((delta[i] ?? 0) >= rank) {
      const lower = i === 0 ? 0 : (bounds[i - 1] as number);
      const upper = bounds[i] as number;
      if (!Number.isFinite(upper)) return { p99: lower, count };
      const below = i === 0 ? 0 : (delta[i - 1] as number);
      return { p99: lower + ((upper - lower) * (rank - below)) / Math.max(1, (delta[i] as number) - below), count };
    }
  }
  return { p99: Number.NaN, count };
}

describe('secure /metrics under a flood of junk tokens', { timeout: 300_000 }, () => {
  let ns: TestNamespace | undefined;
  let operator: OperatorProcess | undefined;
  let prom: PrometheusServer | undefined;
  let tap: ReviewTap | undefined;
  let scratch = '';
  let promToken = '';
  /** When Prometheus' first scrape was seen to succeed: its token was reviewed just before. */
  let firstScrapeAt = 0;
  const reader = `secondcron-metrics-reader-${randomBytes(3).toString('hex')}`;
  const insecure = new Agent({ connect: { rejectUnauthorized: false }, connections: CONNECTIONS, pipelining: 1 });

  const metricsText = async (): Promise<string> => {
    assert.ok(operator);
    const res = await request(`https://127.0.0.1:${operator.metricsPort}/metrics`, { headers: { authorization: `Bearer ${promToken}` }, dispatcher: insecure });
    assert.equal(res.statusCode, 200);
    return res.body.text();
  };

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'secondcron-auth-load-'));
    await installCrd(kubectl);
    ns = await uniqueNamespace('metrics-auth-load');
    await kubectlOk(['create', 'serviceaccount', 'prometheus', '-n', ns.name]);
    await kubectlOk(['create', 'clusterrole', reader, '--verb=get', '--non-resource-url=/metrics']);
    await kubectlOk(['create', 'clusterrolebinding', reader, `--clusterrole=${reader}`, `--serviceaccount=${ns.name}:prometheus`]);
    promToken = (await kubectlOk(['create', 'token', 'prometheus', '-n', ns.name, '--duration=30m'])).trim();

    // The operator's kubeconfig points at the tap, which forwards to the real API server.
    const kc = parseYaml(readFileSync(operatorKubeconfig(), 'utf8')) as KubeconfigDoc;
    const cluster = kc.clusters[0]?.cluster;
    const operatorToken = kc.users[0]?.user.token;
    assert.ok(cluster?.['certificate-authority-data'] && operatorToken, 'the operator kubeconfig has a CA and a token');
    tap = new ReviewTap(cluster.server.replace(/\/+$/, ''), Buffer.from(cluster['certificate-authority-data'], 'base64'), new Set([promToken]));
    const tapCert = await selfSignedCertificate('127.0.0.1');
    const tapUrl = await tap.start(tapCert);
    const kubeconfig = join(scratch, 'kubeconfig');
    writeFileSync(kubeconfig, JSON.stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'tap',
      clusters: [{ name: 'tap', cluster: { server: tapUrl, 'certificate-authority-data': Buffer.from(tapCert.cert).toString('base64') } }],
      users: [{ name: 'operator', user: { token: operatorToken } }],
      contexts: [{ name: 'tap', context: { cluster: 'tap', user: 'operator' } }],
    }));
    operator = await startOperator({ kubeconfig, namespaces: [ns.name], identity: 'auth-load-0', metricsSecure: true, args: ['--leader-elect=false'] });
    for (let i = 0; i < SCHEDULES; i++) await applyScj(ns.name, `tick-${i}`, { intervalSeconds: 1, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 3 });
    prom = await PrometheusServer.start({ scrapeInterval: '1s', jobs: [{ name: 'secondcron', targets: [`127.0.0.1:${operator.metricsPort}`], httpsBearerToken: promToken }] });
    const running = prom;
    await eventually('Prometheus scrapes the operator', async () => {
      const [up] = await running.vector('up{job="secondcron"}');
      return Number(up?.value[1]) === 1 ? true : undefined;
    }, { timeoutMs: 30_000, intervalMs: 200 });
    firstScrapeAt = Date.now();
  });

  after(async () => {
    await insecure.close();
    await prom?.stop();
    await operator?.dispose();
    await tap?.stop();
    await kubectl(['delete', 'clusterrolebinding', reader, '--ignore-not-found']);
    await kubectl(['delete', 'clusterrole', reader, '--ignore-not-found']);
    await ns?.cleanup();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  test('at most the cap of reviews at the API server, every junk request answered 401 or 503, Prometheus keeps scraping', async (t) => {
    assert.ok(tap && prom && operator);
    // The flood starts 52 s after Prometheus' token was first reviewed, so that its 1 min
    // authentication entry expires in the middle of it: Prometheus must get a review through the
    // flood (the lane kept for tokens seen accepted). The 10 s before are the quiet baseline for
    // the trigger latency.
    const floodAt = firstScrapeAt + 52_000;
    await new Promise((r) => setTimeout(r, Math.max(0, floodAt - FLOOD_MS - Date.now())));
    const quietStart = latencyBuckets(await metricsText());
    await new Promise((r) => setTimeout(r, Math.max(0, floodAt - Date.now())));
    const floodStart = latencyBuckets(await metricsText());
    const reviewsBefore = tap.junkReviews;
    const knownBefore = tap.knownReviews;
    const startedAt = Date.now();

    const statuses = new Map<number, number>();
    let retryAfterMissing = 0;
    const perConnection = JUNK / CONNECTIONS;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async (_, c) => {
        for (let i = 0; i < perConnection; i++) {
          // Spread evenly over the 10 s: request i of every connection is due at i/perConnection of it.
          const due = startedAt + (i * FLOOD_MS) / perConnection;
          if (Date.now() < due) await new Promise((r) => setTimeout(r, due - Date.now()));
          const res = await request(`https://127.0.0.1:${operator?.metricsPort}/metrics`, {
            headers: { authorization: `Bearer junk-${c}-${i}-${randomBytes(8).toString('hex')}` },
            dispatcher: insecure,
          });
          await res.body.dump();
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          if (res.statusCode === 503 && res.headers['retry-after'] !== '1') retryAfterMissing++;
        }
      }),
    );
    const floodMs = Date.now() - startedAt;
    const floodEnd = latencyBuckets(await metricsText());
    const unauthorized = statuses.get(401) ?? 0;
    const throttled = statuses.get(503) ?? 0;
    t.diagnostic(`${JUNK} junk requests in ${floodMs} ms: 401 ×${unauthorized}, 503 ×${throttled}; API server: ${tap.junkReviews - reviewsBefore} junk TokenReviews, at most ${tap.peak} reviews open at once`);

    assert.deepEqual([...statuses.keys()].sort(), [401, 503], 'only 401 and 503');
    assert.equal(unauthorized + throttled, JUNK);
    assert.ok(throttled > 0, 'the cap was reached');
    assert.equal(retryAfterMissing, 0, 'every 503 says Retry-After: 1');
    assert.ok(tap.peak <= CAP, `at most ${CAP} reviews at the API server at a time, saw ${tap.peak}`);
    assert.equal(tap.junkReviews - reviewsBefore, unauthorized, 'one TokenReview per 401, none for a 503');
    const text = await metricsText();
    const counted = (result: string): number => Number(new RegExp(`^secondcron_metrics_auth_requests_total\\{result="${result}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
    assert.equal(counted('throttled'), throttled);
    assert.equal(counted('unauthenticated'), unauthorized);

    // Prometheus kept scraping every second through the flood, its token reviewed again in the middle
    // of it (at most one scrape lost to a loaded machine's 1 s scrape timeout).
    assert.ok(tap.knownReviews - knownBefore >= 1, 'Prometheus\' token was reviewed again during the flood');
    const windowS = Math.ceil(floodMs / 1000) + 2;
    const [scrapes] = await prom.vector(`count_over_time(up{job="secondcron"}[${windowS}s])`);
    const [succeeded] = await prom.vector(`sum_over_time(up{job="secondcron"}[${windowS}s])`);
    const failed = Number(scrapes?.value[1]) - Number(succeeded?.value[1]);
    t.diagnostic(`Prometheus: ${succeeded?.value[1]} of ${scrapes?.value[1]} scrapes in the last ${windowS} s succeeded; its token reviewed ${tap.knownReviews - knownBefore}× during the flood`);
    assert.ok(Number(scrapes?.value[1]) >= windowS - 2, `scrapes in the last ${windowS} s: ${scrapes?.value[1]}`);
    assert.ok(failed <= 1, `${failed} scrapes failed during the flood: ${JSON.stringify(await prom.targets())}`);

    const quiet = p99Between(quietStart, floodStart);
    const flood = p99Between(floodStart, floodEnd);
    t.diagnostic(`trigger latency p99 (bucket-interpolated), ${SCHEDULES} schedules × 1 s: quiet ${(quiet.p99 * 1000).toFixed(1)} ms over ${quiet.count} Jobs; flood ${(flood.p99 * 1000).toFixed(1)} ms over ${flood.count} Jobs (${(((flood.p99 - quiet.p99) / quiet.p99) * 100).toFixed(1)} %)`);
  });
});
