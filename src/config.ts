// Command-line flags and their SECONDCRON_* environment twins, validated once at start-up.
// A bad value stops the process at once with a message naming the flag (never a late surprise).
import { MAX_TIMER_DELAY_MS } from './clock/clock.js';
import { type ConnectionLimits, HEALTH_LIMITS, METRICS_LIMITS } from './http/connection-limits.js';
import { DEFAULT_TLS_POLICY, TLS_MIN_VERSIONS, type TlsMinVersion, parseCipherSuites } from './http/tls-policy.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Config {
  kubeconfig: string | undefined;
  namespaces: string[]; // empty = all namespaces
  leaderElect: boolean;
  leaderElectionNamespace: string;
  leaseName: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  identity: string | undefined; // undefined = derived from the pod name at start-up
  metricsPort: number;
  perScheduleMetrics: boolean;
  metricsSecure: boolean;
  metricsCertDir: string | undefined;
  /** Extra DNS names of the self-signed certificate (without --metrics-cert-dir): the metrics Service's. */
  metricsCertDnsNames: string[];
  metricsTlsMinVersion: TlsMinVersion;
  /** IANA names of the TLS 1.2 cipher suites the metrics port accepts. */
  metricsTlsCipherSuites: string[];
  healthPort: number;
  /** Timeouts and connection cap of the metrics port (--http-*, --metrics-tls-handshake-timeout, --metrics-max-connections). */
  metricsLimits: ConnectionLimits;
  /** The same timeouts and the health port's own cap (--health-max-connections). */
  healthLimits: ConnectionLimits;
  maxConcurrentCreates: number;
  qps: number;
  burst: number;
  logLevel: LogLevel;
  shutdownTimeoutMs: number;
}

export class ConfigError extends Error {}

type Kind = 'string' | 'list' | 'duration' | 'port' | 'positiveInt' | 'positiveNumber' | 'bool' | 'logLevel';

interface FlagSpec {
  flag: string;
  kind: Kind;
  help: string;
  default?: string;
}

export const FLAGS: readonly FlagSpec[] = [
  { flag: 'kubeconfig', kind: 'string', help: 'path to a kubeconfig (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)' },
  { flag: 'namespaces', kind: 'list', help: 'comma-separated namespaces to watch (default: all)', default: '' },
  { flag: 'leader-elect', kind: 'bool', help: 'compete for the Lease; false runs as the only scheduler (development)', default: 'true' },
  { flag: 'leader-election-namespace', kind: 'string', help: 'namespace of the Lease (default: $POD_NAMESPACE, else the service account\'s namespace, else "default")' },
  { flag: 'lease-name', kind: 'string', help: 'name of the Lease', default: 'secondcron-leader' },
  { flag: 'lease-duration', kind: 'duration', help: 'how long followers wait before taking over an unrenewed Lease', default: '15s' },
  { flag: 'renew-deadline', kind: 'duration', help: 'the leader stops scheduling if it cannot renew within this', default: '10s' },
  { flag: 'retry-period', kind: 'duration', help: 'interval between Lease acquire/renew attempts', default: '2s' },
  { flag: 'identity', kind: 'string', help: 'leader-election identity (default: <pod name>_<random>)' },
  { flag: 'metrics-port', kind: 'port', help: 'port of /metrics (0 picks a free port)', default: '8080' },
  { flag: 'metrics-secure', kind: 'bool', help: 'serve /metrics over HTTPS to callers the API server authorizes (TokenReview + SubjectAccessReview for the request verb and path, e.g. get /metrics); false: plain HTTP to anyone who reaches the port (local runs)', default: 'true' },
  { flag: 'metrics-cert-dir', kind: 'string', help: 'directory with tls.crt and tls.key for --metrics-secure, reloaded when they change (default: a self-signed certificate made at start)' },
  { flag: 'metrics-cert-dns-names', kind: 'list', help: 'with --metrics-secure and no --metrics-cert-dir: comma-separated DNS names the self-signed certificate carries besides localhost and the pod\'s name, e.g. the metrics Service\'s <svc>.<ns>.svc', default: '' },
  { flag: 'metrics-tls-min-version', kind: 'string', help: 'with --metrics-secure: VersionTLS12 or VersionTLS13', default: DEFAULT_TLS_POLICY.minVersion },
  { flag: 'metrics-tls-cipher-suites', kind: 'list', help: 'with --metrics-secure: comma-separated IANA names of the TLS 1.2 cipher suites to accept, of ECDHE with AES-GCM or ChaCha20-Poly1305 (TLS 1.3 suites are always on)', default: DEFAULT_TLS_POLICY.cipherSuites.join(',') },
  { flag: 'per-schedule-metrics', kind: 'bool', help: 'export secondcron_schedule_* gauges labelled {namespace, name} for every SecondCronJob', default: 'true' },
  { flag: 'health-port', kind: 'port', help: 'port of /healthz and /readyz (0 picks a free port)', default: '8081' },
  { flag: 'http-read-header-timeout', kind: 'duration', help: 'both ports: a request\'s headers must be complete this long after its first byte (controller-runtime\'s ReadHeaderTimeout)', default: durationText(METRICS_LIMITS.headersTimeoutMs) },
  { flag: 'http-request-timeout', kind: 'duration', help: 'both ports: a whole request must be received this long after its first byte; at least --http-read-header-timeout', default: durationText(METRICS_LIMITS.requestTimeoutMs) },
  { flag: 'http-socket-timeout', kind: 'duration', help: 'both ports: a connection with no byte read or written for this long while a request is awaited or served is closed (a silent connection too)', default: durationText(METRICS_LIMITS.inactivityTimeoutMs) },
  { flag: 'http-keep-alive-timeout', kind: 'duration', help: 'both ports: a kept-alive connection idle this long between requests is closed (controller-runtime\'s IdleTimeout)', default: durationText(METRICS_LIMITS.keepAliveTimeoutMs) },
  { flag: 'http-max-header-bytes', kind: 'positiveInt', help: 'both ports: largest request head (request line and headers) in bytes', default: String(METRICS_LIMITS.maxHeaderBytes) },
  { flag: 'http-max-headers-count', kind: 'positiveInt', help: 'both ports: most header lines read of a request', default: String(METRICS_LIMITS.maxHeadersCount) },
  { flag: 'metrics-tls-handshake-timeout', kind: 'duration', help: 'with --metrics-secure: a TLS handshake not complete this long after accept is closed', default: durationText(METRICS_LIMITS.tlsHandshakeTimeoutMs) },
  { flag: 'metrics-max-connections', kind: 'positiveInt', help: 'connections the metrics port holds at once (mid-handshake ones too); one more is closed at accept', default: String(METRICS_LIMITS.maxConnections) },
  { flag: 'health-max-connections', kind: 'positiveInt', help: 'connections the health port holds at once, apart from the metrics port\'s; one more closes the oldest not being answered', default: String(HEALTH_LIMITS.maxConnections) },
  // 400, the default --burst (was 100; 32 before issue 37): in a burst the token bucket (--qps, --burst)
  // binds, not the creates in flight. With 500 Jobs due in one second, at 100 in flight the last create
  // reached the API server 710–887 ms after the slot, even over HTTP/2; at 400, over HTTP/2
  // (tls-dispatcher.ts), 529–541 ms against the bucket's floor of 500 (bench/README.md, issue 36).
  // At 32, an API server answering in 300–900 ms for a few seconds (after a freeze) let 35–100
  // creates a second through and the next slot superseded the rest (bench/README.md, "Freeze").
  { flag: 'max-concurrent-creates', kind: 'positiveInt', help: 'Job creations in flight at once', default: '400' },
  { flag: 'qps', kind: 'positiveNumber', help: 'client-side rate limit for Job creation, requests per second', default: '200' },
  { flag: 'burst', kind: 'positiveInt', help: 'client-side burst for Job creation', default: '400' },
  { flag: 'log-level', kind: 'logLevel', help: 'debug | info | warn | error', default: 'info' },
  { flag: 'shutdown-timeout', kind: 'duration', help: 'on SIGTERM, how long to wait for in-flight creates before releasing the Lease', default: '10s' },
];

export function envName(flag: string): string {
  return 'SECONDCRON_' + flag.toUpperCase().replace(/-/g, '_');
}

export function helpText(): string {
  const lines = ['Usage: node dist/main.js [flags]', '', 'Every flag can also be set with the environment variable shown.', ''];
  for (const f of FLAGS) {
    const def = f.default !== undefined && f.default !== '' ? ` (default ${f.default})` : '';
    lines.push(`  --${f.flag.padEnd(28)} ${f.help}${def}`, `      ${''.padEnd(28)} env ${envName(f.flag)}`);
  }
  lines.push('  --version                      print the version and the git commit of this build');
  lines.push('  --help                         print this text');
  return lines.join('\n');
}

/** Parses `--flag value` / `--flag=value`; flags win over environment variables, which win over defaults. */
/**
 * serviceAccountNamespace: the pod's namespace from its service-account mount, for when the Downward
 * API's POD_NAMESPACE is not set (client-go's in-cluster namespace lookup does the same).
 */
export function parseConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  serviceAccountNamespace: () => string | undefined = () => undefined,
): Config {
  const byName = new Map(FLAGS.map((f) => [f.flag, f]));
  const raw = new Map<string, string>();
  for (const f of FLAGS) {
    const fromEnv = env[envName(f.flag)];
    if (fromEnv !== undefined) raw.set(f.flag, fromEnv);
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith('--')) throw new ConfigError(`unexpected argument "${arg}" (flags start with --)`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const spec = byName.get(name);
    if (!spec) throw new ConfigError(`unknown flag --${name} (see --help)`);
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else if (spec.kind === 'bool' && (argv[i + 1] === undefined || argv[i + 1]!.startsWith('--'))) value = 'true';
    else value = argv[++i];
    if (value === undefined) throw new ConfigError(`flag --${name} needs a value`);
    raw.set(name, value);
  }
  const get = (flag: string): string | undefined => raw.get(flag) ?? byName.get(flag)?.default;
  const value = <T>(flag: string, parse: (v: string) => T | undefined, expected: string): T => {
    const v = get(flag) ?? '';
    const parsed = parse(v.trim());
    if (parsed === undefined) throw new ConfigError(`invalid value "${v}" for --${flag} (${envName(flag)}): expected ${expected}`);
    return parsed;
  };
  const optionalString = (flag: string): string | undefined => {
    const v = get(flag)?.trim();
    return v ? v : undefined;
  };

  const cfg: Config = {
    kubeconfig: optionalString('kubeconfig'),
    namespaces: (get('namespaces') ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0),
    leaderElect: value('leader-elect', parseBool, 'true or false'),
    leaderElectionNamespace: optionalString('leader-election-namespace') ?? (env.POD_NAMESPACE || undefined) ?? serviceAccountNamespace() ?? 'default',
    leaseName: value('lease-name', (v) => (DNS_NAME.test(v) ? v : undefined), 'a DNS subdomain name'),
    leaseDurationMs: value('lease-duration', parseDurationMs, 'a duration such as 15s or 1500ms'),
    renewDeadlineMs: value('renew-deadline', parseDurationMs, 'a duration such as 10s or 1500ms'),
    retryPeriodMs: value('retry-period', parseDurationMs, 'a duration such as 2s or 500ms'),
    identity: optionalString('identity'),
    metricsPort: value('metrics-port', parsePort, 'a port number 0-65535'),
    perScheduleMetrics: value('per-schedule-metrics', parseBool, 'true or false'),
    metricsSecure: value('metrics-secure', parseBool, 'true or false'),
    metricsCertDir: optionalString('metrics-cert-dir'),
    metricsCertDnsNames: (get('metrics-cert-dns-names') ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0),
    metricsTlsMinVersion: value('metrics-tls-min-version', (v) => TLS_MIN_VERSIONS.find((m) => m === v), TLS_MIN_VERSIONS.join(' or ')),
    metricsTlsCipherSuites: value('metrics-tls-cipher-suites', parseCipherSuites, 'IANA names of ECDHE suites with AES-GCM or ChaCha20-Poly1305, e.g. TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256'),
    healthPort: value('health-port', parsePort, 'a port number 0-65535'),
    ...connectionLimits(value),
    maxConcurrentCreates: value('max-concurrent-creates', parsePositiveInt, 'a whole number >= 1'),
    qps: value('qps', parsePositiveNumber, 'a number > 0'),
    burst: value('burst', parsePositiveInt, 'a whole number >= 1'),
    logLevel: value('log-level', (v) => (LOG_LEVELS.includes(v as LogLevel) ? (v as LogLevel) : undefined), 'debug, info, warn or error'),
    shutdownTimeoutMs: value('shutdown-timeout', parseDurationMs, 'a duration such as 10s'),
  };
  for (const ns of cfg.namespaces) {
    if (!DNS_LABEL.test(ns)) throw new ConfigError(`invalid namespace "${ns}" in --namespaces: expected DNS labels separated by commas`);
  }
  if (cfg.metricsCertDir && !cfg.metricsSecure) {
    throw new ConfigError('--metrics-cert-dir needs --metrics-secure');
  }
  if (cfg.metricsCertDnsNames.length > 0 && (!cfg.metricsSecure || cfg.metricsCertDir)) {
    throw new ConfigError('--metrics-cert-dns-names names the self-signed certificate\'s DNS names: it needs --metrics-secure and no --metrics-cert-dir');
  }
  for (const name of cfg.metricsCertDnsNames) {
    if (!DNS_NAME.test(name)) throw new ConfigError(`invalid DNS name "${name}" in --metrics-cert-dns-names: expected lower-case DNS names separated by commas`);
  }
  if (cfg.metricsLimits.headersTimeoutMs > cfg.metricsLimits.requestTimeoutMs) {
    throw new ConfigError(`--http-read-header-timeout (${cfg.metricsLimits.headersTimeoutMs} ms) must not be longer than --http-request-timeout (${cfg.metricsLimits.requestTimeoutMs} ms)`);
  }
  if (cfg.metricsPort !== 0 && cfg.metricsPort === cfg.healthPort) {
    throw new ConfigError(`--metrics-port and --health-port must differ (both ${cfg.metricsPort})`);
  }
  // client-go's constraint: followers must wait longer than a leader may keep acting without a renew.
  if (!(cfg.leaseDurationMs > cfg.renewDeadlineMs)) {
    throw new ConfigError(`--lease-duration (${cfg.leaseDurationMs} ms) must be greater than --renew-deadline (${cfg.renewDeadlineMs} ms)`);
  }
  if (!(cfg.renewDeadlineMs > 1.2 * cfg.retryPeriodMs)) {
    throw new ConfigError(`--renew-deadline (${cfg.renewDeadlineMs} ms) must be greater than 1.2 x --retry-period (${cfg.retryPeriodMs} ms)`);
  }
  return cfg;
}

type ValueOf = <T>(flag: string, parse: (v: string) => T | undefined, expected: string) => T;

/** Both servers share the timeouts and have a connection cap each. */
function connectionLimits(value: ValueOf): { metricsLimits: ConnectionLimits; healthLimits: ConnectionLimits } {
  // Node takes whole milliseconds for its header and request timeouts, and turns a socket timeout
  // beyond its longest timer into 1 ms.
  const ms = (flag: string): number => value(flag, (v) => {
    const n = parseDurationMs(v);
    return n !== undefined && Number.isInteger(n) && n <= MAX_TIMER_DELAY_MS ? n : undefined;
  }, 'a duration of whole milliseconds up to 596h, such as 32s or 1500ms');
  const count = (flag: string): number => value(flag, parsePositiveInt, 'a whole number >= 1');
  const shared = {
    headersTimeoutMs: ms('http-read-header-timeout'),
    requestTimeoutMs: ms('http-request-timeout'),
    inactivityTimeoutMs: ms('http-socket-timeout'),
    keepAliveTimeoutMs: ms('http-keep-alive-timeout'),
    tlsHandshakeTimeoutMs: ms('metrics-tls-handshake-timeout'),
    maxHeaderBytes: count('http-max-header-bytes'),
    maxHeadersCount: count('http-max-headers-count'),
  };
  return {
    metricsLimits: { ...shared, maxConnections: count('metrics-max-connections') },
    healthLimits: { ...shared, maxConnections: count('health-max-connections') },
  };
}

/** A default as a flag reads it: 32s, 1500ms. */
function durationText(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

function parseBool(v: string): boolean | undefined {
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  return undefined;
}

/** "15s", "1500ms", "2m", "1h", or a bare number of seconds. */
export function parseDurationMs(v: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(v);
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  const ms = n * ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const)[unit as 'ms' | 's' | 'm' | 'h'];
  return ms > 0 && Number.isFinite(ms) ? ms : undefined;
}

function parsePort(v: string): number | undefined {
  if (!/^\d+$/.test(v)) return undefined;
  const n = Number(v);
  return n <= 65535 ? n : undefined;
}

function parsePositiveInt(v: string): number | undefined {
  if (!/^\d+$/.test(v)) return undefined;
  const n = Number(v);
  return n >= 1 && Number.isSafeInteger(n) ? n : undefined;
}

function parsePositiveNumber(v: string): number | undefined {
  if (!/^\d+(\.\d+)?$/.test(v)) return undefined;
  const n = Number(v);
  return n > 0 ? n : undefined;
}
