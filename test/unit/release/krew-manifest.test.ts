// The krew manifest `make release` writes: krew's plugin format, one platform per archive.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { load } from 'js-yaml';

import { krewManifest } from '../../../release/krew-manifest.js';

const SHA = 'ab'.repeat(32);
const archive = { os: 'linux', arch: 'amd64', uri: 'https://example.test/kubectl-secondcron-linux-amd64.tar.gz', sha256: SHA, bin: 'kubectl-secondcron' } as const;

test('a v1alpha2 Plugin named secondcron with a v-prefixed version and one platform per archive', () => {
  const m = load(krewManifest({ version: '0.1.0', homepage: 'https://example.test', archives: [archive] })) as {
    apiVersion: string; kind: string; metadata: { name: string };
    spec: { version: string; homepage: string; shortDescription: string; platforms: Record<string, unknown>[] };
  };
  assert.equal(m.apiVersion, 'krew.googlecontainertools.github.com/v1alpha2');
  assert.equal(m.kind, 'Plugin');
  assert.equal(m.metadata.name, 'secondcron');
  assert.equal(m.spec.version, 'v0.1.0');
  assert.deepEqual(m.spec.platforms, [{
    selector: { matchLabels: { os: 'linux', arch: 'amd64' } },
    uri: archive.uri,
    sha256: SHA,
    files: [{ from: 'kubectl-secondcron', to: '.' }, { from: 'LICENSE', to: '.' }],
    bin: 'kubectl-secondcron',
  }]);
  // `krew search` cuts the short description at 50 characters.
  assert.ok(m.spec.shortDescription.length > 0 && m.spec.shortDescription.length <= 50, `${m.spec.shortDescription.length}: ${m.spec.shortDescription}`);
});

test('refuses what krew would refuse', () => {
  assert.throws(() => krewManifest({ version: '1.0', homepage: 'h', archives: [archive] }), /semantic version/);
  assert.throws(() => krewManifest({ version: '1.0.0', homepage: 'h', archives: [] }), /at least one platform/);
  assert.throws(() => krewManifest({ version: '1.0.0', homepage: 'h', archives: [{ ...archive, sha256: 'ABC' }] }), /sha256/);
});
