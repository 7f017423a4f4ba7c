// The image's CycloneDX SBOM, which release/release.sh attaches to the pushed image as a signed
// attestation (`cosign attest --type cyclonedx`). It joins what the image holds, read from the image
// itself: the npm packages in /app (`npm sbom` run in the image: what `npm ci --omit=dev` installed),
// the Debian packages (the image's /var/lib/dpkg/status), and Node.js, which is no Debian package
// here (the official build in /usr/local).
//
// One SBOM for the multi-platform image: the Debian packages of each platform (their purls name the
// architecture); the npm packages and Node.js's version are the same on every platform.
//   node build/release/sbom.js --npm npm-sbom.json --node v24.22.3 --name secondcron --version 0.1.0 \
//     --dpkg amd64=status-amd64 --dpkg arm64=status-arm64 > sbom.cdx.json
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface Component {
  'bom-ref': string;
  type: string;
  name: string;
  version: string;
  purl?: string;
  [key: string]: unknown;
}

interface NpmSbom {
  bomFormat: string;
  specVersion: string;
  components?: Component[];
  dependencies?: unknown[];
}

/** Installed packages of a dpkg status file: name, version, architecture. */
export function dpkgPackages(status: string): { name: string; version: string; arch: string; source?: string }[] {
  const out: { name: string; version: string; arch: string; source?: string }[] = [];
  for (const stanza of status.split(/\n\n+/)) {
    const field = (name: string): string | undefined => new RegExp(`^${name}: (.*)$`, 'm').exec(stanza)?.[1]?.trim();
    const name = field('Package');
    const version = field('Version');
    const arch = field('Architecture');
    if (!name || !version || !arch || !/^Status: .* installed$/m.test(stanza)) continue;
    const source = field('Source')?.split(' ')[0];
    out.push({ name, version, arch, ...(source ? { source } : {}) });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

export function imageSbom(input: { npm: NpmSbom; dpkgStatus: Record<string, string>; nodeVersion: string; name: string; version: string; suite: string; timestamp: string }): Record<string, unknown> {
  if (input.npm.bomFormat !== 'CycloneDX') throw new Error(`npm sbom: not CycloneDX (${input.npm.bomFormat})`);
  const platforms = Object.keys(input.dpkgStatus).sort();
  if (platforms.length === 0) throw new Error('no platform: pass a dpkg status per architecture');
  const debs = new Map<string, Component>();
  for (const arch of platforms) {
    const installed = dpkgPackages(input.dpkgStatus[arch] ?? '');
    if (installed.length === 0) throw new Error(`the dpkg status of ${arch} lists no installed package`);
    for (const p of installed) {
      // Architecture "all" packages are the same file on every platform: one component.
      const purl = `pkg:deb/debian/${p.name}@${encodeURIComponent(p.version)}?arch=${p.arch}&distro=debian-${input.suite}`;
      debs.set(purl, { 'bom-ref': purl, type: 'library', name: p.name, version: p.version, purl, ...(p.source ? { properties: [{ name: 'debian:source', value: p.source }] } : {}) });
    }
  }
  const nodeVersion = input.nodeVersion.replace(/^v/, '');
  const node: Component = {
    'bom-ref': `pkg:generic/node@${nodeVersion}`,
    type: 'application',
    name: 'node',
    version: nodeVersion,
    purl: `pkg:generic/node@${nodeVersion}?download_url=${encodeURIComponent(`https://nodejs.org/dist/v${nodeVersion}/`)}`,
    licenses: [{ license: { id: 'MIT' } }],
  };
  const npm = (input.npm.components ?? []).filter((c) => c.purl?.startsWith('pkg:npm/'));
  if (npm.length === 0) throw new Error('npm sbom lists no npm package');
  return {
    bomFormat: 'CycloneDX',
    specVersion: '1.5',
    serialNumber: `urn:uuid:${randomUUID()}`,
    version: 1,
    metadata: {
      timestamp: input.timestamp,
      tools: [{ vendor: 'secondcron', name: 'release/sbom.ts' }],
      component: { 'bom-ref': `pkg:oci/${input.name}@${input.version}`, type: 'container', name: input.name, version: input.version, properties: platforms.map((a) => ({ name: 'oci:platform', value: `linux/${a}` })) },
    },
    components: [node, ...npm, ...[...debs.values()].sort((a, b) => (a.purl ?? '').localeCompare(b.purl ?? ''))],
    ...(input.npm.dependencies ? { dependencies: input.npm.dependencies } : {}),
  };
}

function main(): void {
  const { values } = parseArgs({
    options: {
      npm: { type: 'string' },
      dpkg: { type: 'string', multiple: true },
      node: { type: 'string' },
      name: { type: 'string' },
      version: { type: 'string' },
      suite: { type: 'string', default: 'trixie' },
    },
  });
  const need = (v: string | undefined, flag: string): string => {
    if (!v) throw new Error(`--${flag} is required`);
    return v;
  };
  const dpkgStatus: Record<string, string> = {};
  for (const spec of values.dpkg ?? []) {
    const [arch, file] = spec.split(/=(.*)/s);
    if (!arch || !file) throw new Error(`--dpkg ${spec}: expected ARCH=FILE`);
    dpkgStatus[arch] = readFileSync(file, 'utf8');
  }
  const sbom = imageSbom({
    npm: JSON.parse(readFileSync(need(values.npm, 'npm'), 'utf8')) as NpmSbom,
    dpkgStatus,
    nodeVersion: need(values.node, 'node'),
    name: need(values.name, 'name'),
    version: need(values.version, 'version'),
    suite: values.suite ?? 'trixie',
    timestamp: new Date().toISOString(),
  });
  process.stdout.write(`${JSON.stringify(sbom, null, 2)}\n`);
}

if (process.argv[1]?.endsWith('sbom.js')) {
  try {
    main();
  } catch (err) {
    process.stderr.write(`sbom: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
