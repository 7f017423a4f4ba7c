// The operator as users install and run it: `make release` (release/release.sh) pushes the image
// built from the Dockerfile and the Helm chart to a real OCI registry on 127.0.0.1; the chart is
// installed as the README says, `helm install secondcron oci://<registry>/charts/secondcron
// --version <v>`, into a namespace that enforces the "restricted" Pod Security Standard; the real
// kubelet node of the test cluster (test/cluster/real-node/) pulls the image from that registry
// (containerd's registry host configuration, no import); three pods reach the apiserver through the
// `kubernetes` Service with their projected service-account token. Jobs' pods run on the fake (kwok)
// nodes. Run by `make e2e`; the tests share one installation and run in order.
// Before anything is installed, the release is checked as a platform team would: the image and the
// chart verify with `cosign verify` against the release key, the image's CycloneDX SBOM with
// `cosign verify-attestation`, the chart names the image by its digest, and the same version
// cannot be pushed again; the tag is an index of linux/amd64 and linux/arm64 (the node pulls amd64);
// at the end, a tag moved to another image fails verification.
// The chart's NetworkPolicy is installed (networkPolicy.enabled, the API server's real endpoint and
// the node's address as an operator of such a cluster would set them): the API server accepts it and
// the pods still reach the API server and the scraper. The node's network plugin (bridge + portmap,
// test/cluster/real-node/configs.ts) does not enforce NetworkPolicy, so this shows the objects are
// valid and harmless, not that they filter; that is why networkPolicy.enabled stays off by default.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { Agent, request } from 'undici';

import { LocalRegistry } from '../cluster/registry.js';
import { repoRoot } from '../cluster/repo-root.js';
import { type CommandResult, runCommand } from '../cluster/run-command.js';
import { JobWatcher, type SeenJob } from '../cluster/job-watcher.js';
import { NODE_NAME, POD_GATEWAY, POD_SUBNET, REAL_NODE_LABEL, REAL_NODE_TAINT } from '../cluster/real-node/addresses.js';
import type { RealNodeInfo } from '../cluster/real-node/real-node.js';
import { JITTER_FACTOR } from '../../src/election/elector-config.js';
import { kubectl, kubectlOk, testBinDir, testKubeconfig, uniqueNamespace, type TestNamespace } from '../integration/helpers/cluster-env.js';
import { eventually } from '../integration/helpers/eventually.js';
import { helmOk, valuesFile } from '../integration/helpers/helm.js';
import { PrometheusServer } from '../integration/helpers/prometheus-server.js';
import { auditedJobWrites, createProblems, describeJobWrites } from '../integration/helpers/audit-creates.js';
import type { Counts } from '../integration/helpers/replica-counters.js';
import { applyScj, sleepUntil } from '../integration/helpers/scj.js';
import { auditSlots, describeAudit, nextMidSecond, slotProblems } from '../integration/helpers/slot-audit.js';
import { ServiceTargets } from './helpers/service-targets.js';
import { containerPid, processView, projectedTokenDir, readRealNodeInfo, swapProjectedToken } from './helpers/node-runtime.js';

/** The README's release name (the chart's full name is then the release name). */
const RELEASE = 'secondcron';
const FULLNAME = 'secondcron';
const SELECTOR = `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/name=secondcron`;
const LEASE = 'secondcron-leader';
/** The ServiceAccount the test's Prometheus scrapes as (bound to <release>-metrics-reader). */
const SCRAPER = 'e2e-prometheus';
/** The chart's defaults, which this test keeps. */
const RETRY_MS = 2_000;
const GRACE_SECONDS = 30;
/** client-go re-reads a token file once a minute; a follower asks for the Lease every retry period (with jitter up to 4.4 s); 30 s more for a loaded machine. */
const TOKEN_REREAD_MS = 90_000;

const PACKAGE_VERSION = (JSON.parse(readFileSync(join(repoRoot(), 'package.json'), 'utf8')) as { version: string }).version;
/** Two pre-releases pushed by the test: installed, then upgraded to. */
const VERSIONS = [`${PACKAGE_VERSION}-e2e.1`, `${PACKAGE_VERSION}-e2e.2`] as const;

function clusterDir(): string {
  const dir = process.env.SECONDCRON_TEST_CLUSTER_DIR;
  if (!dir) throw new Error('SECONDCRON_TEST_CLUSTER_DIR is not set: run end-to-end tests with `make e2e`.');
  return dir;
}

interface Pod {
  metadata: { name: string; uid: string; deletionTimestamp?: string; labels?: Record<string, string> };
  spec: { nodeName?: string; containers?: { image: string }[] };
  status: {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { name: string; ready: boolean; restartCount: number; containerID?: string; started?: boolean }[];
  };
}

let node: RealNodeInfo;
let registry: LocalRegistry;
/** The image the released chart names by default, <registry>/secondcron:<version>. */
let image: { ref: string };
let ns: TestNamespace;
let jobsNs: TestNamespace;
let watcher: JobWatcher;
let prometheus: PrometheusServer | undefined;
let targets: ServiceTargets | undefined;
let scratch: string;
/** The released image's blobs (imageBlobDownloads counts these). */
let imageBlobs = new Set<string>();
/** The release key pair (cosign generate-key-pair), in scratch. */
const COSIGN_PASSWORD = 'e2e-release-key';
let cosignKey: { key: string; pub: string };

async function operatorPods(): Promise<Pod[]> {
  const out = await kubectlOk(['get', 'pods', '-n', ns.name, '-l', SELECTOR, '-o', 'json']);
  return (JSON.parse(out) as { items: Pod[] }).items.filter((p) => !p.metadata.deletionTimestamp);
}

const isReady = (p: Pod): boolean => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

async function readyPods(count: number, timeoutMs = 180_000): Promise<Pod[]> {
  return eventually(`${count} operator pods Ready`, async () => {
    const pods = await operatorPods();
    return pods.length === count && pods.every(isReady) ? pods : undefined;
  }, { timeoutMs, intervalMs: 500 });
}

/** The Lease holder's pod name (identity "<pod name>_<random>"), or '' when released. */
async function leaderPod(): Promise<string> {
  const holder = (await kubectlOk(['get', 'lease', LEASE, '-n', ns.name, '-o', 'jsonpath={.spec.holderIdentity}'])).trim();
  return holder.replace(/_[^_]*$/, '');
}

/** Where the `kubernetes` Service sends the pods: the API server's address and port (its EndpointSlice). */
async function apiServerEndpoint(): Promise<{ address: string; port: number }> {
  const out = await kubectlOk(['get', 'endpointslices', '-n', 'default', '-l', 'kubernetes.io/service-name=kubernetes', '-o', 'json']);
  const slices = (JSON.parse(out) as { items: { endpoints?: { addresses: string[] }[]; ports?: { port?: number }[] }[] }).items;
  const address = slices[0]?.endpoints?.[0]?.addresses[0];
  const port = slices[0]?.ports?.[0]?.port;
  assert.ok(slices.length === 1 && address && port, `one EndpointSlice of the kubernetes Service with an endpoint: ${out}`);
  return { address, port };
}

async function logs(pod: string): Promise<string> {
  return kubectlOk(['logs', '-n', ns.name, pod, '-c', 'operator']);
}

/** Sorted slots (ms) of one SecondCronJob's Jobs seen in [fromMs, toMs]. */
function slotsBetween(owner: string, fromMs: number, toMs: number): SeenJob[] {
  return watcher.seen.filter((j) => j.owner === owner && j.slotMs >= fromMs && j.slotMs <= toMs).sort((a, b) => a.slotMs - b.slotMs);
}

function gaps(values: number[]): number[] {
  return values.slice(1).map((v, i) => v - (values[i] as number));
}

/** Σ over every pod that ever ran (each its own series; a deleted pod's last scrape, 1 s before it ended) of one counter. */
async function everyPod(selector: string): Promise<number> {
  assert.ok(prometheus, 'Prometheus runs');
  const samples = await prometheus.vector(`sum(max_over_time(${selector}[1h]))`);
  return samples.reduce((sum, s) => sum + Number(s.value[1]), 0);
}

/** Missed slots and AlreadyExists creates counted by every pod that ever ran. */
async function counts(): Promise<Counts> {
  return {
    missed: await everyPod(`secondcron_triggers_missed_total{namespace="${ns.name}"}`),
    alreadyExists: await everyPod(`secondcron_jobs_created_total{namespace="${ns.name}",result="already_exists"}`),
    // Not compared per schedule here (one schedule, tick): the sum is its count.
    missedBySchedule: {},
    perScheduleExported: false,
  };
}

/**
 * The middle of the next second (every slot up to the whole second before it is decided), and the
 * counters then: Prometheus scrapes every second, so they are read 2.5 s later.
 */
async function mark(): Promise<{ ms: number; counts: Counts }> {
  await sleepUntil(nextMidSecond(Date.now()));
  const ms = Math.floor(Date.now() / 1000) * 1000;
  await new Promise((r) => setTimeout(r, 2_500));
  return { ms, counts: await counts() };
}

/** Every slot of `tick` in (start, end], against what every pod counted in between (helpers/slot-audit.ts). */
function auditTick(start: { ms: number; counts: Counts }, end: { ms: number; counts: Counts }, maxGapMs: number): { problems: string[]; text: string } {
  const audit = auditSlots([{ name: 'tick', jobSlots: watcher.seen.filter((j) => j.owner === 'tick').map((j) => j.slotMs) }], { fromMs: start.ms, toMs: end.ms });
  const missed = end.counts.missed - start.counts.missed;
  const alreadyExists = end.counts.alreadyExists - start.counts.alreadyExists;
  return {
    problems: slotProblems(audit, { maxGapMs, counted: missed, alreadyExists }),
    text: `${describeAudit(audit)}; secondcron_triggers_missed_total +${missed}, already_exists +${alreadyExists}`,
  };
}

/** A candidate retries every retryPeriod × (1 + rand·JITTER_FACTOR) (client-go's jitter), then the next slot comes within 1 s; 1 s more for the release and a loaded machine. */
const HANDOVER_GAP_MS = RETRY_MS * (1 + JITTER_FACTOR) + 1_000 + 1_000;

/** cosign as `make e2e` built it (test/cluster/build-cosign.sh). */
function cosignBin(): string {
  const bin = process.env.SECONDCRON_COSIGN;
  if (!bin) throw new Error('SECONDCRON_COSIGN is not set: run with `make e2e`');
  return bin;
}

/** release/release.sh of the image and the chart as `version` into the test registry, signed with the test key. */
function releaseRun(version: string): Promise<CommandResult> {
  return runCommand(join(repoRoot(), 'release', 'release.sh'), [], {
    env: {
      ...process.env, REGISTRY: registry.host, VERSION: version, PLAIN_HTTP: '1', RELEASE_PARTS: 'image chart', RELEASE_DIR: join(scratch, 'release'), HELM: join(testBinDir(), 'helm'),
      // No transparency log here (no Rekor): a key, and `--insecure-ignore-tlog` when verifying.
      COSIGN: cosignBin(), COSIGN_KEY: cosignKey.key, COSIGN_PASSWORD, COSIGN_TLOG: '0',
    },
    timeoutMs: 1_800_000,
  });
}

/** `make release` of `version`; what it printed, and the pushed image's digest. */
async function release(version: string): Promise<{ out: string; digest: string }> {
  const res = await releaseRun(version);
  assert.equal(res.code, 0, `release/release.sh: ${res.stderr.split('\n').slice(-40).join('\n')}`);
  const digest = new RegExp(`^image: ${registry.host}/secondcron:${version.replace(/\./g, '\\.')}@(sha256:[0-9a-f]{64})$`, 'm').exec(res.stdout)?.[1];
  assert.ok(digest, `release printed the image digest: ${res.stdout}`);
  return { out: res.stdout, digest };
}

/** `cosign verify[-attestation]` against the release's public key and the plain-HTTP test registry. */
function cosignVerify(args: string[]): Promise<CommandResult> {
  return runCommand(cosignBin(), [...args, '--key', cosignKey.pub, '--insecure-ignore-tlog=true', '--allow-http-registry', '--allow-insecure-registry'], { timeoutMs: 120_000 });
}

/** Tags other than cosign's own (sha256-<digest>.sig/.att, when it stores them as tags). */
async function versionTags(repository: string): Promise<string[]> {
  return (await registry.tags(repository)).filter((t) => !t.startsWith('sha256-')).sort();
}

/** The chart as the README installs it: from the registry, by version. */
const CHART = (): string => `oci://${registry.host}/charts/secondcron`;

/**
 * Blobs of the released linux/amd64 image (its config and layers) the test registry has served:
 * GETs, which pushes do not make. Only the image's own: cosign's signature and attestation blobs
 * live in the same repository, and verifying them downloads them.
 */
function imageBlobDownloads(): number {
  return registry.log().split('\n').filter((l) => { const m = / GET \/v2\/secondcron\/blobs\/(sha256:[0-9a-f]{64})$/.exec(l); return m !== null && imageBlobs.has(m[1] ?? ''); }).length;
}

/** The config and layer digests of the amd64 image `ref` (by digest) names, itself or through its index. */
async function blobsOf(digest: string): Promise<Set<string>> {
  const get = async (ref: string): Promise<{ mediaType?: string; manifests?: { digest: string; platform?: { architecture: string } }[]; config?: { digest: string }; layers?: { digest: string }[] }> => {
    const res = await request(`http://${registry.host}/v2/secondcron/manifests/${ref}`, {
      headers: { accept: 'application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json, application/vnd.docker.distribution.manifest.list.v2+json' },
    });
    assert.equal(res.statusCode, 200, `manifest ${ref}`);
    return (await res.body.json()) as Awaited<ReturnType<typeof get>>;
  };
  let manifest = await get(digest);
  if (manifest.manifests) {
    const amd64 = manifest.manifests.find((m) => m.platform?.architecture === 'amd64');
    assert.ok(amd64, 'the index has linux/amd64');
    manifest = await get(amd64.digest);
  }
  return new Set([manifest.config?.digest ?? '', ...(manifest.layers ?? []).map((l) => l.digest)].filter(Boolean));
}

/** Image references the node's containerd holds. */
async function nodeImages(): Promise<string[]> {
  const res = await runCommand(node.ctr, ['--address', node.containerdSocket, '-n', node.namespace, 'images', 'ls', '-q'], { timeoutMs: 30_000 });
  assert.equal(res.code, 0, res.stderr);
  return res.stdout.trim().split('\n');
}

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'secondcron-e2e-'));
  node = readRealNodeInfo(clusterDir());
  const toolsDir = process.env.SECONDCRON_RELEASE_TOOLS_DIR;
  if (!toolsDir) throw new Error('SECONDCRON_RELEASE_TOOLS_DIR is not set: run with `make e2e`');
  registry = await LocalRegistry.start(toolsDir);
  // The node pulls over plain HTTP from the test registry: containerd's hosts.toml for that host.
  const hosts = join(node.registryHostsDir, registry.host);
  mkdirSync(hosts, { recursive: true });
  writeFileSync(join(hosts, 'hosts.toml'), `server = "http://${registry.host}"\n\n[host."http://${registry.host}"]\n  capabilities = ["pull", "resolve"]\n`);
  const keys = await runCommand(cosignBin(), ['generate-key-pair'], { cwd: scratch, env: { ...process.env, COSIGN_PASSWORD }, timeoutMs: 60_000 });
  assert.equal(keys.code, 0, keys.stderr);
  cosignKey = { key: join(scratch, 'cosign.key'), pub: join(scratch, 'cosign.pub') };
  const pushed = await release(VERSIONS[0]);
  // The released chart names the image by digest: what the node pulls is what was signed.
  image = { ref: `${registry.host}/secondcron@${pushed.digest}` };
  imageBlobs = await blobsOf(pushed.digest);
  assert.ok(imageBlobs.size >= 2, 'a config and layers');
  assert.match(pushed.out, new RegExp(`^chart: ${CHART()} --version ${VERSIONS[0]}$`, 'm'));
  assert.deepEqual([await versionTags('secondcron'), await versionTags('charts/secondcron')], [[VERSIONS[0]], [VERSIONS[0]]]);
  await verifyRelease(VERSIONS[0], pushed.digest);
  ns = await uniqueNamespace('secondcron-e2e');
  await kubectlOk(['label', 'namespace', ns.name, 'pod-security.kubernetes.io/enforce=restricted', 'pod-security.kubernetes.io/enforce-version=latest']);
  jobsNs = await uniqueNamespace('e2e-jobs');
  watcher = await new JobWatcher({ kubeconfigPath: testKubeconfig(), namespace: jobsNs.name }).start();
}, { timeout: 50 * 60_000 });

after(async () => {
  watcher?.stop();
  targets?.stop();
  await prometheus?.stop();
  if (ns) {
    await kubectl(['delete', 'pod', '-n', ns.name, 'e2e-startup', '--ignore-not-found', '--grace-period=0', '--force']);
    await helmOk(['uninstall', RELEASE, '-n', ns.name, '--wait', '--timeout', '2m'], { kubeconfig: testKubeconfig() }).catch(() => undefined);
    await kubectl(['delete', 'namespace', ns.name, '--wait=true', '--timeout=120s']);
  }
  await jobsNs?.cleanup();
  if (node && registry) rmSync(join(node.registryHostsDir, registry.host), { recursive: true, force: true });
  await registry?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** What a platform team checks before installing `version`: signatures, SBOM, digest pin, immutability. */
async function verifyRelease(version: string, digest: string): Promise<void> {
  const tagged = `${registry.host}/secondcron:${version}`;
  // One tag, an index of linux/amd64 and linux/arm64 (the node pulls its own platform from it).
  const index = await request(`http://${registry.host}/v2/secondcron/manifests/${version}`, {
    headers: { accept: 'application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.list.v2+json' },
  });
  assert.equal(index.statusCode, 200);
  const list = (await index.body.json()) as { manifests?: { platform?: { os: string; architecture: string } }[] };
  assert.deepEqual((list.manifests ?? []).map((m) => `${m.platform?.os}/${m.platform?.architecture}`).sort(), ['linux/amd64', 'linux/arm64'], JSON.stringify(list));
  const signed = await cosignVerify(['verify', tagged]);
  assert.equal(signed.code, 0, `cosign verify ${tagged}: ${signed.stderr}`);
  const signatures = JSON.parse(signed.stdout) as { critical: { image: { 'docker-manifest-digest': string } } }[];
  assert.ok(signatures.length >= 1 && signatures.every((s) => s.critical.image['docker-manifest-digest'] === digest), signed.stdout);

  const attested = await cosignVerify(['verify-attestation', '--type', 'cyclonedx', tagged]);
  assert.equal(attested.code, 0, `cosign verify-attestation ${tagged}: ${attested.stderr}`);
  const envelope = JSON.parse(attested.stdout.trim().split('\n')[0] ?? '') as { payload: string };
  const statement = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8')) as {
    predicateType: string;
    subject: { digest: { sha256: string } }[];
    predicate: { bomFormat: string; components: { name: string; version: string; purl?: string }[] };
  };
  assert.equal(statement.predicateType, 'https://cyclonedx.org/bom');
  assert.equal(`sha256:${statement.subject[0]?.digest.sha256}`, digest);
  const bom = statement.predicate;
  assert.equal(bom.bomFormat, 'CycloneDX');
  const purls = bom.components.map((c) => c.purl ?? '');
  assert.ok(purls.includes(`pkg:generic/node@${process.versions.node}?download_url=${encodeURIComponent(`https://nodejs.org/dist/${process.version}/`)}`), 'Node.js, the one the tests run on');
  assert.ok(purls.some((p) => p.startsWith('pkg:npm/@kubernetes/client-node@') || p.startsWith('pkg:npm/%40kubernetes/client-node@')), 'the npm dependencies');
  for (const arch of ['amd64', 'arm64']) {
    assert.ok(purls.some((p) => p.startsWith('pkg:deb/debian/libc6@') && p.includes(`arch=${arch}&`)), `the Debian packages of linux/${arch}`);
  }
  assert.ok(!purls.some((p) => p.startsWith('pkg:npm/typescript@')), 'no dev dependency: the image has none');

  const chart = `${registry.host}/charts/secondcron:${version}`;
  const chartSigned = await cosignVerify(['verify', chart]);
  assert.equal(chartSigned.code, 0, `cosign verify ${chart}: ${chartSigned.stderr}`);
  const values = await helmOk(['show', 'values', CHART(), '--version', version, '--plain-http']);
  assert.match(values, new RegExp(`^  digest: "${digest}"$`, 'm'), 'the chart pins the image digest');
  assert.match(values, new RegExp(`^  tag: "${version.replace(/\./g, '\\.')}"$`, 'm'), 'the tag stays for humans');

  const again = await releaseRun(version);
  assert.notEqual(again.code, 0, 'the same version pushed twice');
  assert.match(again.stderr, /is in the registry already/);
}

test('Pod Security Admission "restricted" is enforced in the release namespace', async () => {
  const privileged = {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'e2e-privileged', namespace: ns.name },
    spec: { containers: [{ name: 'c', image: image.ref, securityContext: { privileged: true } }] },
  };
  const res = await kubectl(['apply', '--dry-run=server', '-f', '-'], { input: JSON.stringify(privileged) });
  assert.notEqual(res.code, 0, 'a privileged pod must be rejected');
  assert.match(res.stderr, /violates PodSecurity "restricted/);
});

test('helm install from the registry: the node pulls the image; three pods Running and Ready on the real node through their probes', async (t) => {
  assert.equal((await nodeImages()).filter((i) => i.startsWith(`${registry.host}/`)).length, 0, 'no image of the registry on the node before the install');
  assert.equal(imageBlobDownloads(), 0, 'pushing downloads no image blob');
  // Only where to run: the image comes from the released chart's defaults.
  const apiServer = await apiServerEndpoint();
  const values = valuesFile({
    nodeSelector: { [REAL_NODE_LABEL]: 'true' },
    tolerations: [{ key: REAL_NODE_TAINT, operator: 'Equal', value: 'true', effect: 'NoSchedule' }],
    // metrics.secure is the chart's default: the test's Prometheus scrapes as this ServiceAccount.
    metrics: { readerSubjects: [{ kind: 'ServiceAccount', name: SCRAPER, namespace: ns.name }] },
    // The API server listens on a port of its own here (not 443/6443), at the node's address; the
    // test's Prometheus runs on the node, whose traffic to the pods leaves the bridge's address.
    networkPolicy: {
      enabled: true,
      apiServer: { ports: [apiServer.port], cidrs: [`${apiServer.address}/32`] },
      metricsFrom: [{ ipBlock: { cidr: `${POD_GATEWAY}/32` } }],
    },
  });
  const started = Date.now();
  await helmOk(['install', RELEASE, CHART(), '--version', VERSIONS[0], '--plain-http', '-n', ns.name, '-f', values], { kubeconfig: testKubeconfig() });
  rmSync(join(values, '..'), { recursive: true, force: true });
  const pods = await readyPods(3);
  t.diagnostic(`3 pods Ready ${Date.now() - started} ms after helm install (image ${image.ref})`);
  const deployment = JSON.parse(await kubectlOk(['get', 'deployment', FULLNAME, '-n', ns.name, '-o', 'json'])) as { spec: { template: { spec: { containers: { image: string; imagePullPolicy: string }[] } } } };
  assert.deepEqual(deployment.spec.template.spec.containers.map((c) => [c.image, c.imagePullPolicy]), [[image.ref, 'IfNotPresent']]);
  assert.ok((await nodeImages()).includes(image.ref), `containerd holds ${image.ref}`);
  const pulled = (await kubectlOk(['get', 'events', '-n', ns.name, '--field-selector', 'reason=Pulled', '-o', 'jsonpath={range .items[*]}{.message}{"\\n"}{end}'])).trim().split('\n');
  assert.ok(pulled.some((m) => m.startsWith(`Successfully pulled image "${image.ref}"`)), `the kubelet pulled the image: ${pulled.join(' | ')}`);
  t.diagnostic(`image blobs the registry served to the node: ${imageBlobDownloads()}`);
  assert.ok(imageBlobDownloads() > 0, 'the registry served the image layers');
  for (const p of pods) {
    assert.equal(p.spec.nodeName, NODE_NAME, `${p.metadata.name} runs on the real node`);
    assert.equal(p.status.phase, 'Running');
    assert.ok(p.status.podIP?.startsWith(POD_SUBNET.replace(/0\/24$/, '')), `${p.metadata.name} has a bridge address (${p.status.podIP})`);
    const c = p.status.containerStatuses?.[0];
    assert.ok(c?.ready && c.started, `${p.metadata.name}: container started and ready`);
    assert.equal(c?.restartCount, 0, `${p.metadata.name} never restarted`);
  }
  const events = await kubectlOk(['get', 'events', '-n', ns.name, '--field-selector', 'reason=Unhealthy', '-o', 'name']);
  t.diagnostic(`probe failures during start-up: ${events.trim().split('\n').filter(Boolean).length}`);
  // The NetworkPolicy as the API server stored it; the pods above are Ready, i.e. their caches synced
  // through the API server it admits.
  const policy = JSON.parse(await kubectlOk(['get', 'networkpolicy', FULLNAME, '-n', ns.name, '-o', 'json'])) as { spec: { policyTypes: string[]; egress: { ports: { port: number | string }[]; to?: { ipBlock?: { cidr: string } }[] }[]; ingress: { ports: { port: number | string }[] }[] } };
  assert.deepEqual(policy.spec.policyTypes, ['Ingress', 'Egress']);
  assert.deepEqual(policy.spec.egress[0], { ports: [{ port: apiServer.port, protocol: 'TCP' }], to: [{ ipBlock: { cidr: `${apiServer.address}/32` } }] });
  assert.deepEqual(policy.spec.ingress.map((r) => r.ports.map((p) => p.port)), [['metrics']]);
  t.diagnostic(`NetworkPolicy ${FULLNAME} accepted; API server ${apiServer.address}:${apiServer.port}; the node's bridge CNI does not enforce it`);
});

test('one leader among the pods; each pod uses its in-cluster service account', async () => {
  const pods = await operatorPods();
  const leader = await eventually('a Lease holder', async () => (await leaderPod()) || undefined);
  assert.ok(pods.some((p) => p.metadata.name === leader), `Lease holder ${leader} is one of ${pods.map((p) => p.metadata.name).join(', ')}`);
  for (const p of pods) {
    const start = (await logs(p.metadata.name)).split('\n').find((l) => l.includes('"msg":"starting"'));
    assert.ok(start, `${p.metadata.name} logged its start`);
    const entry = JSON.parse(start) as { credentials?: string; server?: string };
    assert.equal(entry.credentials, 'in-cluster service account');
    assert.equal(entry.server, 'https://10.96.0.1:443', 'through the kubernetes Service');
  }
});

test('helm test: the chart\'s test pod passes against the running release (Lease held and fresh, metrics Service answers)', async (t) => {
  const out = await helmOk(['test', RELEASE, '-n', ns.name, '--logs', '--timeout', '3m'], { kubeconfig: testKubeconfig() });
  t.diagnostic(out.trim().split('\n').filter((l) => l.startsWith('ok:')).join('; '));
  assert.match(out, /Phase:\s+Succeeded/);
  assert.match(out, new RegExp(`ok: Lease ${LEASE} held by ${await leaderPod()}_`));
  assert.match(out, /ok: https?:\/\/10\.96\.[0-9.]+:8080\/metrics /, 'found through the Service link variables (no DNS here)');
  await kubectlOk(['delete', 'pod', '-n', ns.name, '-l', 'app.kubernetes.io/component=test', '--wait=true']);
});

test('the container runs as the image\'s uid 65532 (the chart sets no ids) with a read-only root file system (seen from the runtime)', async () => {
  for (const p of await operatorPods()) {
    const id = p.status.containerStatuses?.[0]?.containerID;
    assert.ok(id, `${p.metadata.name} has a container`);
    const view = processView(await containerPid(node, id));
    assert.equal(view.uid, 65532, `${p.metadata.name}: uid of the container's process (the image's USER)`);
    // The chart sets no group, and the runtime gave none from the image's USER 65532:65532: group 0
    // (measured in the e2e run of 2026-12-03; the image's /etc/passwd has no entry for 65532), as
    // OpenShift runs every container. podSecurityContext.runAsGroup chooses another.
    assert.equal(view.gid, 0, `${p.metadata.name}: gid of the container's process`);
    assert.ok(view.rootMountOptions.includes('ro'), `${p.metadata.name}: / is mounted ${view.rootMountOptions.join(',')}`);
    assert.deepEqual(view.cmdline.slice(-2), ['--optimize-for-size', 'dist/main.js'], `${p.metadata.name}: node itself is PID 1, with the image's V8 flag (${view.cmdline.join(' ')})`);
    assert.match(view.cmdline[0] ?? '', /(^|\/)node$/);
  }
  // And from inside, through the kubelet (exec): writing to / fails, /tmp (emptyDir) works.
  const pod = (await operatorPods())[0]?.metadata.name as string;
  const out = await kubectlOk(['exec', '-n', ns.name, pod, '-c', 'operator', '--', 'node', '-e',
    "const fs=require('fs');for(const f of ['/probe','/tmp/probe']){try{fs.writeFileSync(f,'x');console.log(f+' ok')}catch(e){console.log(f+' '+e.code)}}"]);
  assert.deepEqual(out.trim().split('\n'), ['/probe EROFS', '/tmp/probe ok']);
});

test('Prometheus scrapes the three pods through the metrics Service over HTTPS with a reader token; secondcron_leader sums to 1', async (t) => {
  // The secure default on the real pods: no token is refused with a bare 401, a token bound to
  // <release>-metrics-reader (metrics.readerSubjects) is let in.
  const pod = (await operatorPods())[0];
  assert.ok(pod?.status.podIP, 'a pod with an address');
  const insecure = new Agent({ connect: { rejectUnauthorized: false } });
  const anonymous = await request(`https://${pod.status.podIP}:8080/metrics`, { dispatcher: insecure });
  assert.deepEqual([anonymous.statusCode, await anonymous.body.text()], [401, 'Unauthorized\n']);
  await insecure.close();
  await kubectlOk(['create', 'serviceaccount', SCRAPER, '-n', ns.name]);
  const token = (await kubectlOk(['create', 'token', SCRAPER, '-n', ns.name, '--duration=2h'])).trim();
  const targetsFile = join(scratch, 'targets.json');
  targets = await new ServiceTargets(targetsFile, ns.name, `${FULLNAME}-metrics`, 'metrics').start();
  prometheus = await PrometheusServer.start({ scrapeInterval: '1s', jobs: [{ name: 'secondcron', targetsFile, httpsBearerToken: token }] });
  const prom = prometheus;
  const pods = (await operatorPods()).map((p) => p.metadata.name).sort();
  await eventually('three targets up', async () => {
    const targets = await prom.targets();
    const up = targets.filter((x) => x.health === 'up').map((x) => x.labels.pod as string).sort();
    return JSON.stringify(up) === JSON.stringify(pods) ? true : undefined;
  }, { timeoutMs: 60_000, intervalMs: 1_000 });
  const samples = await eventually('secondcron_leader of three pods', async () => {
    const s = await prom.vector('secondcron_leader');
    return s.length === 3 ? s : undefined;
  }, { timeoutMs: 30_000 });
  t.diagnostic(`secondcron_leader: ${samples.map((s) => `${s.metric.pod}=${s.value[1]}`).join(', ')}`);
  assert.equal(samples.reduce((sum, s) => sum + Number(s.value[1]), 0), 1);
  const leader = samples.find((s) => s.value[1] === '1')?.metric.pod;
  assert.equal(leader, await leaderPod(), 'the pod reporting leader=1 holds the Lease');
});

test('a SecondCronJob at intervalSeconds 1 gives a Job every second', async (t) => {
  // No history: a slot run again after a handover is created again, and the audit log shows it.
  await applyScj(jobsNs.name, 'tick', { intervalSeconds: 1, successfulJobsHistoryLimit: 0, failedJobsHistoryLimit: 0 });
  const first = await eventually('the first Job', async () => watcher.seen.find((j) => j.owner === 'tick'), { timeoutMs: 30_000 });
  await eventually('ten Jobs', async () => (slotsBetween('tick', first.slotMs, Infinity).length >= 10 ? true : undefined), { timeoutMs: 30_000 });
  const jobs = slotsBetween('tick', first.slotMs, first.slotMs + 9_000);
  assert.deepEqual(gaps(jobs.map((j) => j.slotMs)), Array(9).fill(1_000), 'one Job per second, none missing');
  assert.deepEqual(watcher.duplicates(), [], 'no slot created twice');
  const latencies = jobs.map((j) => j.arrivedMs - j.slotMs);
  t.diagnostic(`slot → Job seen: ${latencies.join(', ')} ms`);
});

test('delete the leader pod: the next Job within about a retry period, no slot twice, missed slots counted, the replacement joins as a follower', async (t) => {
  const start = await mark();
  const before = new Set((await operatorPods()).map((p) => p.metadata.name));
  const old = await leaderPod();
  const deletedAt = Date.now();
  await kubectlOk(['delete', 'pod', '-n', ns.name, old, '--wait=false']);
  const next = await eventually('a new leader', async () => {
    const l = await leaderPod();
    return l && l !== old ? l : undefined;
  }, { timeoutMs: 60_000, intervalMs: 100 });
  const pods = await readyPods(3);
  const replacement = pods.find((p) => !before.has(p.metadata.name))?.metadata.name;
  assert.ok(replacement, 'a replacement pod was created');
  // The leader now writes its waiting statuses before it releases the Lease (issue 32), so the
  // replacement pod may already be a candidate when it does: either may win, one leader only.
  await new Promise((r) => setTimeout(r, 3_000));
  assert.equal(await leaderPod(), next, 'leadership stayed with the new leader');
  if (next !== replacement) assert.ok(!(await logs(replacement)).includes('"msg":"started leading"'), 'the replacement pod is a follower');

  // The window runs past the takeover to now: a new leader that creates no Job leaves a tail.
  const end = await mark();
  const around = slotsBetween('tick', deletedAt - 5_000, end.ms);
  const largest = Math.max(...gaps(around.map((j) => j.arrivedMs)));
  const audit = auditTick(start, end, Math.ceil(HANDOVER_GAP_MS / 1_000) * 1_000);
  // The pods' creates as the API server answered them (the shared cluster audits service accounts' Job writes).
  const writes = await auditedJobWrites({ namespace: jobsNs.name, fromMs: start.ms - 1_000 });
  t.diagnostic(`leader ${old} → ${next}; largest gap between Jobs seen ${largest} ms; ${audit.text}; ${describeJobWrites(writes)}`);
  assert.deepEqual(createProblems(writes), [], 'API server audit: no Job name created twice, no 409');
  assert.deepEqual(watcher.duplicates(), [], 'no slot created twice');
  assert.deepEqual(audit.problems, [], 'every slot has a Job or is counted once as missed; the largest gap is one handover');
  assert.ok(largest <= HANDOVER_GAP_MS, `largest gap ${largest} ms ≤ ${HANDOVER_GAP_MS} ms`);
});

test('helm upgrade to a second pushed version replaces every pod: no slot twice, every missed slot counted', async (t) => {
  const second = await release(VERSIONS[1]);
  assert.deepEqual(await versionTags('charts/secondcron'), [...VERSIONS].sort());
  const start = await mark();
  const oldPods = new Set((await operatorPods()).map((p) => p.metadata.name));
  const started = Date.now();
  await helmOk(['upgrade', RELEASE, CHART(), '--version', VERSIONS[1], '--plain-http', '-n', ns.name, '--reset-then-reuse-values'], { kubeconfig: testKubeconfig() });
  const rollout = await kubectl(['rollout', 'status', `deployment/${FULLNAME}`, '-n', ns.name, '--timeout=300s'], { timeoutMs: 320_000 });
  assert.equal(rollout.code, 0, rollout.stderr);
  const pods = await readyPods(3);
  assert.ok(pods.every((p) => !oldPods.has(p.metadata.name)), 'all three pods were replaced');
  assert.deepEqual(pods.map((p) => p.spec.containers?.[0]?.image), Array(3).fill(`${registry.host}/secondcron@${second.digest}`));
  const releases = JSON.parse(await helmOk(['list', '-n', ns.name, '-o', 'json'], { kubeconfig: testKubeconfig() })) as { name: string; chart: string }[];
  assert.deepEqual(releases.map((r) => [r.name, r.chart]), [[RELEASE, `secondcron-${VERSIONS[1]}`]]);
  const done = Date.now();
  // A few seconds of the new leader's Jobs, then one more scrape of every pod (in mark()).
  await new Promise((r) => setTimeout(r, 4_000));
  const end = await mark();

  const window = slotsBetween('tick', started - 2_000, end.ms);
  const largest = Math.max(...gaps(window.map((j) => j.arrivedMs)));
  // Every handover of the rollout is graceful (SIGTERM releases the Lease).
  const audit = auditTick(start, end, Math.ceil(HANDOVER_GAP_MS / 1_000) * 1_000);
  const writes = await auditedJobWrites({ namespace: jobsNs.name, fromMs: start.ms - 1_000 });
  t.diagnostic(`rolling update ${done - started} ms; ${window.length} Jobs; largest gap between Jobs seen ${largest} ms; ${audit.text}; ${describeJobWrites(writes)}`);
  assert.deepEqual(createProblems(writes), [], 'API server audit: no Job name created twice (three graceful handovers, history limit 0), no 409');
  assert.deepEqual(watcher.duplicates(), [], 'no slot created twice');
  assert.deepEqual(audit.problems, [], 'every slot has a Job or is counted once as missed; no handover longer than one retry period');
});

test('the projected token is read again: a token swapped the way the kubelet swaps it is used', async () => {
  const leader = await leaderPod();
  const follower = (await operatorPods()).find((p) => p.metadata.name !== leader);
  assert.ok(follower, 'a follower');
  // An identity with no permissions: the apiserver names it in every refusal, so its name in the
  // follower's log proves the new file is what the follower sends.
  await kubectlOk(['create', 'serviceaccount', 'e2e-swapped', '-n', ns.name]);
  const token = (await kubectlOk(['create', 'token', 'e2e-swapped', '-n', ns.name, '--duration=10m'])).trim();
  const identity = `system:serviceaccount:${ns.name}:e2e-swapped`;
  assert.ok(!(await logs(follower.metadata.name)).includes(identity));
  const restore = swapProjectedToken(projectedTokenDir(clusterDir(), follower.metadata.uid), token);
  try {
    await eventually(`${follower.metadata.name} sending the swapped token`, async () =>
      ((await logs(follower.metadata.name)).includes(identity) ? true : undefined), { timeoutMs: TOKEN_REREAD_MS, intervalMs: 1_000 });
  } finally {
    restore();
  }
});

test('SIGTERM during start-up (before the caches sync) ends the pod promptly', async (t) => {
  // The chart's own pod, pointed at a Service address nothing answers: its caches never sync.
  const deploy = JSON.parse(await kubectlOk(['get', 'deployment', FULLNAME, '-n', ns.name, '-o', 'json'])) as {
    spec: { template: { spec: { containers: { env?: { name: string }[] }[] } } };
  };
  const spec = deploy.spec.template.spec;
  const container = spec.containers[0];
  assert.ok(container, 'the chart has an operator container');
  container.env = [...(container.env ?? []), { name: 'KUBERNETES_SERVICE_HOST', value: '10.96.255.254' }, { name: 'KUBERNETES_SERVICE_PORT', value: '443' }] as { name: string }[];
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'e2e-startup', namespace: ns.name, labels: { app: 'e2e-startup' } }, spec };
  await kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(pod) });
  await eventually('the stuck pod started', async () => {
    const out = await kubectl(['logs', '-n', ns.name, 'e2e-startup', '-c', 'operator']);
    return out.code === 0 && out.stdout.includes('"msg":"starting"') ? true : undefined;
  }, { timeoutMs: 60_000, intervalMs: 500 });
  await new Promise((r) => setTimeout(r, 2_000));
  const state = JSON.parse(await kubectlOk(['get', 'pod', 'e2e-startup', '-n', ns.name, '-o', 'json'])) as Pod;
  assert.equal(isReady(state), false, 'still starting: not Ready');
  const t0 = Date.now();
  await kubectlOk(['delete', 'pod', 'e2e-startup', '-n', ns.name, '--wait=true', '--timeout=90s'], { timeoutMs: 100_000 });
  const elapsed = Date.now() - t0;
  t.diagnostic(`pod gone ${elapsed} ms after the delete (grace period ${GRACE_SECONDS} s)`);
  assert.ok(elapsed < 10_000, `ended in ${elapsed} ms, not after the ${GRACE_SECONDS} s grace period`);
});

test('a tampered tag fails verification: the version tag moved to an unsigned image', async () => {
  const tagged = `${registry.host}/secondcron:${VERSIONS[0]}`;
  const bah = (args: string[]): Promise<CommandResult> => runCommand(join(repoRoot(), 'test', 'image', 'buildah.sh'), args, { timeoutMs: 120_000 });
  const local = 'localhost/secondcron-e2e-tampered:latest';
  const from = await bah(['from', 'scratch']);
  assert.equal(from.code, 0, from.stderr);
  const container = from.stdout.trim();
  try {
    assert.equal((await bah(['config', '--label', 'io.secondcron.e2e.tampered=true', container])).code, 0);
    const committed = await bah(['commit', '--quiet', container, local]);
    assert.equal(committed.code, 0, committed.stderr);
    const pushed = await bah(['push', '--quiet', '--tls-verify=false', local, `docker://${tagged}`]);
    assert.equal(pushed.code, 0, pushed.stderr);
  } finally {
    await bah(['rm', container]);
    await bah(['rmi', '-f', local]);
  }
  const verify = await cosignVerify(['verify', tagged]);
  assert.notEqual(verify.code, 0, `the moved tag verified: ${verify.stdout}`);
  assert.match(verify.stderr, /no (matching )?signatures/i);
  const attestation = await cosignVerify(['verify-attestation', '--type', 'cyclonedx', tagged]);
  assert.notEqual(attestation.code, 0, 'the moved tag has no SBOM attestation');
});
