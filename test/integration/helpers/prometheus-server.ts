// A real Prometheus (Debian's package, installed by `make prometheus`) for integration tests: its
// own config and TSDB in a temp dir, a free loopback port, stopped by the test (and by the
// harness's exit handlers as a last resort). Also promtool, and the HTTP API calls tests need.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePorts } from '../../cluster/free-ports.js';
import { ManagedProcess } from '../../cluster/managed-process.js';
import { track } from '../../cluster/process-registry.js';
import { type CommandResult, runCommand } from '../../cluster/run-command.js';
import { eventually } from './eventually.js';

export interface ScrapeJob {
  name: string;
  /** host:port of each /metrics endpoint. */
  targets?: string[];
  /** Static labels on every series, e.g. the namespace Kubernetes discovery would add. */
  labels?: Record<string, string>;
  /** Keep the scraped labels on a clash with target labels (the per-schedule gauges' namespace). */
  honorLabels?: boolean;
  /** Scrape over HTTPS with this bearer token, not verifying the (self-signed) certificate unless `verify` says how. */
  httpsBearerToken?: string;
  /** With httpsBearerToken: verify the certificate against this CA file, for this name (tls_config ca_file, server_name). */
  verify?: { caFile: string; serverName: string };
  /**
   * Instead of targets: a file_sd file (JSON target groups) that Prometheus re-reads whenever it
   * changes. Debian's Prometheus is built without Kubernetes discovery; tests that follow a
   * Service's endpoints write them here (test/e2e/helpers/service-targets.ts).
   */
  targetsFile?: string;
}

function scrapeConfig(j: ScrapeJob): Record<string, unknown> {
  const common = {
    job_name: j.name,
    honor_labels: j.honorLabels ?? false,
    ...(j.httpsBearerToken
      ? {
        scheme: 'https',
        authorization: { type: 'Bearer', credentials: j.httpsBearerToken },
        tls_config: j.verify ? { ca_file: j.verify.caFile, server_name: j.verify.serverName } : { insecure_skip_verify: true },
      }
      : {}),
  };
  if (j.targetsFile) return { ...common, file_sd_configs: [{ files: [j.targetsFile], refresh_interval: '1s' }] };
  return { ...common, static_configs: [{ targets: j.targets ?? [], labels: j.labels ?? {} }] };
}

export interface PrometheusOptions {
  jobs: ScrapeJob[];
  /** Also the evaluation interval, e.g. '1s'. */
  scrapeInterval: string;
  /** Absolute paths of rule files to load. */
  ruleFiles?: string[];
}

export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

export type QueryAnswer =
  | { ok: true; resultType: string; result: Sample[] | [number, string] }
  | { ok: false; errorType: string; error: string };

interface ApiEnvelope<T> {
  status: 'success' | 'error';
  data?: T;
  errorType?: string;
  error?: string;
}

export interface RuleState {
  name: string;
  type: 'alerting' | 'recording';
  health: string;
  lastError?: string;
  state?: 'inactive' | 'pending' | 'firing';
}

const BINARY_HINT = 'is Prometheus installed? Run `make prometheus` (Debian package prometheus).';

export class PrometheusServer {
  private constructor(
    readonly url: string,
    private readonly proc: ManagedProcess,
    private readonly dir: string,
    private readonly untrack: () => void,
  ) {}

  static async start(opts: PrometheusOptions): Promise<PrometheusServer> {
    const dir = mkdtempSync(join(tmpdir(), 'secondcron-prom-'));
    const [port] = (await freePorts(1)) as [number];
    // JSON is YAML, so the config needs no YAML writer.
    const config = {
      global: { scrape_interval: opts.scrapeInterval, scrape_timeout: opts.scrapeInterval, evaluation_interval: opts.scrapeInterval },
      rule_files: opts.ruleFiles ?? [],
      scrape_configs: opts.jobs.map(scrapeConfig),
    };
    const configPath = join(dir, 'prometheus.yml');
    writeFileSync(configPath, JSON.stringify(config, null, 2));
    const proc = new ManagedProcess({
      name: 'prometheus',
      command: 'prometheus',
      args: [
        `--config.file=${configPath}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      logPath: join(dir, 'prometheus.log'),
    });
    const untrack = track({ name: proc.name, dispose: () => proc.stop(5_000), killNow: () => proc.killNow() });
    const server = new PrometheusServer(`http://127.0.0.1:${port}`, proc, dir, untrack);
    try {
      await eventually(
        'prometheus ready',
        async () => {
          if (!proc.running) throw new Error(`${proc.describeExit()} (${BINARY_HINT})\n${proc.logTail(20)}`);
          const res = await fetch(`${server.url}/-/ready`).catch(() => undefined);
          return res?.status === 200 ? true : undefined;
        },
        { timeoutMs: 30_000 },
      );
    } catch (err) {
      await server.stop();
      throw err;
    }
    return server;
  }

  /** Instant query; a PromQL error comes back as { ok: false } with Prometheus' message. */
  async query(expr: string, timeSeconds?: number): Promise<QueryAnswer> {
    const params = new URLSearchParams({ query: expr });
    if (timeSeconds !== undefined) params.set('time', String(timeSeconds));
    const res = await fetch(`${this.url}/api/v1/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: params,
    });
    const body = (await res.json()) as ApiEnvelope<{ resultType: string; result: Sample[] | [number, string] }>;
    if (body.status === 'success' && body.data) return { ok: true, resultType: body.data.resultType, result: body.data.result };
    return { ok: false, errorType: body.errorType ?? `HTTP ${res.status}`, error: body.error ?? '' };
  }

  /** Instant vector query that must succeed; returns the samples. */
  async vector(expr: string): Promise<Sample[]> {
    const answer = await this.query(expr);
    if (!answer.ok) throw new Error(`query failed (${answer.errorType}: ${answer.error}): ${expr}`);
    if (answer.resultType !== 'vector') throw new Error(`expected a vector, got ${answer.resultType}: ${expr}`);
    return answer.result as Sample[];
  }

  async rules(): Promise<RuleState[]> {
    const res = await fetch(`${this.url}/api/v1/rules`);
    const body = (await res.json()) as ApiEnvelope<{ groups: { rules: RuleState[] }[] }>;
    if (body.status !== 'success' || !body.data) throw new Error(`/api/v1/rules: ${body.error ?? res.status}`);
    return body.data.groups.flatMap((g) => g.rules);
  }

  async targets(): Promise<{ labels: Record<string, string>; health: string; lastError: string }[]> {
    const res = await fetch(`${this.url}/api/v1/targets?state=active`);
    const body = (await res.json()) as ApiEnvelope<{ activeTargets: { labels: Record<string, string>; health: string; lastError: string }[] }>;
    if (body.status !== 'success' || !body.data) throw new Error(`/api/v1/targets: ${body.error ?? res.status}`);
    return body.data.activeTargets;
  }

  logTail(lines = 40): string {
    return this.proc.logTail(lines);
  }

  async stop(): Promise<void> {
    await this.proc.stop(5_000);
    this.untrack();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Runs promtool (from the same Debian package); a missing binary is reported with the fix. */
export async function promtool(args: string[], cwd?: string): Promise<CommandResult> {
  try {
    return await runCommand('promtool', args, { cwd, timeoutMs: 60_000 });
  } catch (err) {
    throw new Error(`cannot run promtool: ${err instanceof Error ? err.message : String(err)} (${BINARY_HINT})`);
  }
}
