import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dpkgPackages, imageSbom } from '../../../release/sbom.js';

const STATUS = `Package: libc6
Status: install ok installed
Architecture: amd64
Source: glibc
Version: 2.41-12

Package: removed-one
Status: deinstall ok config-files
Architecture: amd64
Version: 1.0

Package: ca-certificates
Status: install ok installed
Architecture: all
Version: 20250419
`;

const NPM = {
  bomFormat: 'CycloneDX',
  specVersion: '1.5',
  components: [{ 'bom-ref': 'undici@8.14.0', type: 'library', name: 'undici', version: '8.14.0', purl: 'pkg:npm/undici@8.14.0' }],
  dependencies: [{ ref: 'undici@8.14.0', dependsOn: [] }],
};

test('dpkg status: installed packages only, with their source package', () => {
  assert.deepEqual(dpkgPackages(STATUS), [
    { name: 'ca-certificates', version: '20250419', arch: 'all' },
    { name: 'libc6', version: '2.41-12', arch: 'amd64', source: 'glibc' },
  ]);
});

test('the image SBOM: CycloneDX 1.5 with node, the npm packages and the Debian packages of each platform as purls', () => {
  const sbom = imageSbom({ npm: NPM, dpkgStatus: { amd64: STATUS, arm64: STATUS.replace('Architecture: amd64', 'Architecture: arm64') }, nodeVersion: 'v24.22.3', name: 'secondcron', version: '0.1.0', suite: 'trixie', timestamp: '2026-12-04T00:00:00Z' }) as {
    bomFormat: string; specVersion: string; metadata: { component: { type: string; name: string; version: string; properties: { value: string }[] } }; components: { name: string; purl: string }[];
  };
  assert.deepEqual(sbom.metadata.component.properties.map((p) => p.value), ['linux/amd64', 'linux/arm64']);
  assert.equal(sbom.bomFormat, 'CycloneDX');
  assert.equal(sbom.specVersion, '1.5');
  assert.deepEqual(sbom.metadata.component.type, 'container');
  assert.deepEqual(sbom.components.map((c) => c.purl), [
    'pkg:generic/node@24.22.3?download_url=https%3A%2F%2Fnodejs.org%2Fdist%2Fv24.22.3%2F',
    'pkg:npm/undici@8.14.0',
    'pkg:deb/debian/ca-certificates@20250419?arch=all&distro=debian-trixie',
    'pkg:deb/debian/libc6@2.41-12?arch=amd64&distro=debian-trixie',
    'pkg:deb/debian/libc6@2.41-12?arch=arm64&distro=debian-trixie',
  ]);
});

test('refuses an empty side: no Debian package, no npm package', () => {
  assert.throws(() => imageSbom({ npm: NPM, dpkgStatus: { amd64: '' }, nodeVersion: 'v24.22.3', name: 's', version: '1.0.0', suite: 'trixie', timestamp: 't' }), /amd64 lists no installed package/);
  assert.throws(() => imageSbom({ npm: NPM, dpkgStatus: {}, nodeVersion: 'v24.22.3', name: 's', version: '1.0.0', suite: 'trixie', timestamp: 't' }), /no platform/);
  assert.throws(() => imageSbom({ npm: { ...NPM, components: [] }, dpkgStatus: { amd64: STATUS }, nodeVersion: 'v24.22.3', name: 's', version: '1.0.0', suite: 'trixie', timestamp: 't' }), /no npm package/);
});
