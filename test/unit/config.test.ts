import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ConfigError, FLAGS, envName, helpText, parseConfig } from '../../src/config.js';

test('defaults match client-go and the design', () => {
  const c = parseConfig([], {});
  assert.equal(c.leaseDurationMs, 15_000);
  assert.equal(c.renewDeadlineMs, 10_000);
  assert.equal(c.retryPeriodMs, 2_000);
  assert.equal(c.leaseName, 'secondcron-leader');
  assert.equal(c.metricsPort, 8080);
  assert.equal(c.healthPort, 8081);
  assert.equal(c.maxConcurrentCreates, 400);
  assert.deepEqual(c.namespaces, []);
  assert.equal(c.leaderElectionNamespace, 'default');
  assert.equal(c.perScheduleMetrics, true);
});

test('secure metrics by default; --metrics-secure=false for local runs; --metrics-cert-dir only with it', () => {
  assert.equal(parseConfig([], {}).metricsSecure, true, 'HTTPS and authorization by default');
  assert.equal(parseConfig(['--metrics-secure=false'], {}).metricsSecure, false);
  assert.equal(parseConfig([], { SECONDCRON_METRICS_SECURE: 'false' }).metricsSecure, false);
  assert.throws(() => parseConfig(['--metrics-secure=false', '--metrics-cert-dir', '/certs'], {}), /--metrics-cert-dir needs --metrics-secure/);
  const c = parseConfig(['--metrics-cert-dir', '/certs'], {});
  assert.deepEqual([c.metricsSecure, c.metricsCertDir], [true, '/certs']);
});

test('--metrics-cert-dns-names: the self-signed certificate\'s extra names, checked as DNS names', () => {
  assert.deepEqual(parseConfig([], {}).metricsCertDnsNames, []);
  const names = 'sc-metrics.ops.svc, sc-metrics.ops.svc.cluster.local';
  assert.deepEqual(parseConfig([], { SECONDCRON_METRICS_CERT_DNS_NAMES: names }).metricsCertDnsNames, ['sc-metrics.ops.svc', 'sc-metrics.ops.svc.cluster.local']);
  assert.throws(() => parseConfig(['--metrics-cert-dns-names=Sc_Metrics.ops'], {}), /invalid DNS name "Sc_Metrics.ops" in --metrics-cert-dns-names/);
  for (const argv of [['--metrics-secure=false'], ['--metrics-cert-dir=/certs']]) {
    assert.throws(() => parseConfig([...argv, '--metrics-cert-dns-names=a.b.svc'], {}), /--metrics-cert-dns-names .* needs --metrics-secure and no --metrics-cert-dir/, argv.join());
  }
});

test('per-schedule gauges can be turned off by flag or SECONDCRON_PER_SCHEDULE_METRICS', () => {
  assert.equal(parseConfig(['--per-schedule-metrics=false'], {}).perScheduleMetrics, false);
  assert.equal(parseConfig([], { SECONDCRON_PER_SCHEDULE_METRICS: 'false' }).perScheduleMetrics, false);
  assert.throws(() => parseConfig([], { SECONDCRON_PER_SCHEDULE_METRICS: 'off' }), /--per-schedule-metrics \(SECONDCRON_PER_SCHEDULE_METRICS\)/);
});

test('the Lease namespace: the flag, else POD_NAMESPACE, else the service-account namespace, else default', () => {
  const saNamespace = (): string => 'from-sa';
  assert.equal(parseConfig([], {}, saNamespace).leaderElectionNamespace, 'from-sa');
  assert.equal(parseConfig([], { POD_NAMESPACE: '' }, saNamespace).leaderElectionNamespace, 'from-sa');
  assert.equal(parseConfig([], { POD_NAMESPACE: 'ops' }, saNamespace).leaderElectionNamespace, 'ops');
  assert.equal(parseConfig(['--leader-election-namespace', 'x'], { POD_NAMESPACE: 'ops' }, saNamespace).leaderElectionNamespace, 'x');
  assert.equal(parseConfig([], {}, () => undefined).leaderElectionNamespace, 'default');
});

test('flags win over SECONDCRON_* env, which wins over defaults', () => {
  const env = { SECONDCRON_LEASE_DURATION: '20s', SECONDCRON_NAMESPACES: 'a, b', SECONDCRON_RETRY_PERIOD: '1s', POD_NAMESPACE: 'ops' };
  const c = parseConfig(['--lease-duration=30s', '--max-concurrent-creates', '4', '--leader-elect=false'], env);
  assert.equal(c.leaseDurationMs, 30_000);
  assert.equal(c.retryPeriodMs, 1_000);
  assert.deepEqual(c.namespaces, ['a', 'b']);
  assert.equal(c.maxConcurrentCreates, 4);
  assert.equal(c.leaderElect, false);
  assert.equal(c.leaderElectionNamespace, 'ops');
  assert.equal(parseConfig(['--retry-period', '500ms', '--renew-deadline', '3s', '--lease-duration', '4s'], {}).retryPeriodMs, 500);
});

test('a bad value names the flag and its environment variable', () => {
  const cases: [string[], Record<string, string>, RegExp][] = [
    [['--metrics-port', '70000'], {}, /--metrics-port \(SECONDCRON_METRICS_PORT\)/],
    [[], { SECONDCRON_QPS: 'fast' }, /invalid value "fast" for --qps/],
    [['--lease-duration', '5s'], {}, /--lease-duration .* must be greater than --renew-deadline/],
    [['--retry-period', '9s'], {}, /--renew-deadline .* 1.2 x --retry-period/],
    [['--log-level', 'loud'], {}, /--log-level/],
    [['--nope'], {}, /unknown flag --nope/],
    [['--namespaces', 'Bad_NS'], {}, /invalid namespace "Bad_NS"/],
    [['--health-port', '9000', '--metrics-port', '9000'], {}, /must differ/],
    [['--max-concurrent-creates', '0'], {}, /--max-concurrent-creates/],
  ];
  for (const [argv, env, message] of cases) {
    assert.throws(() => parseConfig(argv, env), (err: unknown) => err instanceof ConfigError && message.test(err.message), argv.join(' '));
  }
});

test('--help lists every flag with its environment variable', () => {
  const text = helpText();
  for (const f of FLAGS) {
    assert.match(text, new RegExp(`--${f.flag}\\b`));
    assert.ok(text.includes(envName(f.flag)));
  }
});

test('--metrics-tls-min-version and --metrics-tls-cipher-suites: TLS 1.2 and the AEAD ECDHE suites by default; anything else is refused by name', () => {
  const c = parseConfig([], {});
  assert.equal(c.metricsTlsMinVersion, 'VersionTLS12');
  assert.equal(c.metricsTlsCipherSuites.length, 6);
  assert.ok(c.metricsTlsCipherSuites.every((n) => /^TLS_ECDHE_(ECDSA|RSA)_WITH_(AES_\d+_GCM_SHA\d+|CHACHA20_POLY1305_SHA256)$/.test(n)), c.metricsTlsCipherSuites.join());
  const set = parseConfig(['--metrics-tls-min-version', 'VersionTLS13'], { SECONDCRON_METRICS_TLS_CIPHER_SUITES: 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384' });
  assert.deepEqual([set.metricsTlsMinVersion, set.metricsTlsCipherSuites], ['VersionTLS13', ['TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384']]);
  assert.throws(() => parseConfig(['--metrics-tls-min-version', 'VersionTLS11'], {}), /invalid value "VersionTLS11" for --metrics-tls-min-version \(SECONDCRON_METRICS_TLS_MIN_VERSION\): expected VersionTLS12 or VersionTLS13/);
  assert.throws(() => parseConfig(['--metrics-tls-cipher-suites', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA'], {}), /invalid value "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA" for --metrics-tls-cipher-suites/);
});

test('connection limits: controller-runtime\'s timeouts and the caps by default, each a flag and a SECONDCRON_* variable', () => {
  const c = parseConfig([], {});
  const shared = { headersTimeoutMs: 32_000, requestTimeoutMs: 64_000, inactivityTimeoutMs: 32_000, keepAliveTimeoutMs: 90_000, tlsHandshakeTimeoutMs: 10_000, maxHeaderBytes: 16_384, maxHeadersCount: 64 };
  assert.deepEqual(c.metricsLimits, { ...shared, maxConnections: 256 });
  assert.deepEqual(c.healthLimits, { ...shared, maxConnections: 32 });
  const set = parseConfig(
    ['--http-read-header-timeout=5s', '--http-request-timeout', '1m', '--http-socket-timeout=2500ms', '--http-keep-alive-timeout=1s', '--metrics-tls-handshake-timeout=3s', '--http-max-header-bytes=8192', '--http-max-headers-count=20', '--metrics-max-connections=10'],
    { SECONDCRON_HEALTH_MAX_CONNECTIONS: '4' },
  );
  const changed = { headersTimeoutMs: 5_000, requestTimeoutMs: 60_000, inactivityTimeoutMs: 2_500, keepAliveTimeoutMs: 1_000, tlsHandshakeTimeoutMs: 3_000, maxHeaderBytes: 8_192, maxHeadersCount: 20 };
  assert.deepEqual(set.metricsLimits, { ...changed, maxConnections: 10 });
  assert.deepEqual(set.healthLimits, { ...changed, maxConnections: 4 });
});

test('connection limits: a bad value names the flag, its variable and what is expected', () => {
  const cases: [string[], Record<string, string>, RegExp][] = [
    [['--http-read-header-timeout', 'soon'], {}, /^invalid value "soon" for --http-read-header-timeout \(SECONDCRON_HTTP_READ_HEADER_TIMEOUT\): expected a duration of whole milliseconds/],
    [['--http-socket-timeout=0s'], {}, /invalid value "0s" for --http-socket-timeout/],
    [[], { SECONDCRON_HTTP_KEEP_ALIVE_TIMEOUT: '1.5ms' }, /invalid value "1.5ms" for --http-keep-alive-timeout \(SECONDCRON_HTTP_KEEP_ALIVE_TIMEOUT\)/],
    [['--metrics-tls-handshake-timeout=-1s'], {}, /--metrics-tls-handshake-timeout/],
    [['--http-keep-alive-timeout=600h'], {}, /invalid value "600h" for --http-keep-alive-timeout .*: expected a duration of whole milliseconds up to 596h/],
    [['--metrics-max-connections=0'], {}, /invalid value "0" for --metrics-max-connections \(SECONDCRON_METRICS_MAX_CONNECTIONS\): expected a whole number >= 1/],
    [[], { SECONDCRON_HEALTH_MAX_CONNECTIONS: 'many' }, /invalid value "many" for --health-max-connections/],
    [['--http-max-headers-count=2.5'], {}, /--http-max-headers-count/],
    [['--http-max-header-bytes=16k'], {}, /--http-max-header-bytes/],
    [['--http-read-header-timeout=2m'], {}, /^--http-read-header-timeout \(120000 ms\) must not be longer than --http-request-timeout \(64000 ms\)$/],
  ];
  for (const [argv, env, message] of cases) {
    assert.throws(() => parseConfig(argv, env), (err: unknown) => err instanceof ConfigError && message.test(err.message), [...argv, JSON.stringify(env)].join(' '));
  }
});
