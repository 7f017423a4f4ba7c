// release/release.sh refuses a release it must not push, before it builds or pushes anything: the
// version's git tag missing or not at HEAD, CHANGELOG.md's [Unreleased] not empty. Run on a scratch
// git repository holding the files it reads; when every check passes it stops at the next thing it
// needs (cosign, here a path that does not exist), which shows the checks let a good release through.
// (A version already in the registry is refused in the e2e test, against its registry.)
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { repoRoot } from '../../cluster/repo-root.js';

const ROOT = repoRoot();
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
let dir: string;

const git = (...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', '-c', 'commit.gpgsign=false', '-c', 'tag.gpgsign=false', ...args], { cwd: dir, encoding: 'utf8' });

/** CHANGELOG.md with [Unreleased] emptied (its entries dropped), or as given. */
function changelog(unreleased: string): string {
  const text = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');
  const start = text.indexOf('## [Unreleased]');
  const next = text.indexOf('\n## [', start + 1);
  assert.ok(start >= 0 && next > start, 'CHANGELOG.md has [Unreleased] and a release after it');
  return `${text.slice(0, start)}## [Unreleased]\n\n${unreleased}${text.slice(next + 1)}`;
}

function release(version = VERSION): { code: number | null; stderr: string } {
  const res = spawnSync(join(dir, 'release', 'release.sh'), [], {
    env: { PATH: process.env.PATH ?? '', HOME: dir, REGISTRY: '127.0.0.1:9/none', VERSION: version, RELEASE_PARTS: 'image chart', COSIGN: join(dir, 'no-cosign'), RELEASE_DIR: join(dir, 'out') },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: res.status, stderr: res.stderr };
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'secondcron-release-checks-'));
  for (const f of ['release/release.sh', 'package.json', 'helm/secondcron/Chart.yaml']) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    copyFileSync(join(ROOT, f), join(dir, f));
  }
  writeFileSync(join(dir, '.gitignore'), 'out/\n');
  writeFileSync(join(dir, 'CHANGELOG.md'), changelog(''));
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'Release');
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('without the git tag vX.Y.Z: refused', () => {
  const res = release();
  assert.equal(res.code, 1);
  assert.match(res.stderr, new RegExp(`there is no git tag v${VERSION.replace(/\./g, '\\.')}`));
});

test('with the tag on another commit: refused', () => {
  git('tag', `v${VERSION}`);
  writeFileSync(join(dir, 'README.md'), 'after the tag\n');
  git('add', '-A');
  git('commit', '-qm', 'after the tag');
  try {
    const res = release();
    assert.equal(res.code, 1);
    assert.match(res.stderr, /the git tag v.* is not HEAD/);
  } finally {
    git('tag', '-d', `v${VERSION}`);
  }
});

test('with entries under [Unreleased]: refused; emptied and tagged: the checks pass', () => {
  writeFileSync(join(dir, 'CHANGELOG.md'), changelog('### Fixed\n\n- something not released yet\n\n'));
  git('commit', '-qam', 'an entry');
  git('tag', `v${VERSION}`);
  const refused = release();
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /\[Unreleased\] section is not empty/);
  git('tag', '-d', `v${VERSION}`);

  writeFileSync(join(dir, 'CHANGELOG.md'), changelog(''));
  git('commit', '-qam', 'released');
  git('tag', `v${VERSION}`);
  const passed = release();
  assert.equal(passed.code, 1);
  assert.match(passed.stderr, /no-cosign not found/, passed.stderr);
});

test('a pre-release needs no tag (test pushes) but still a semantic version', () => {
  assert.match(release(`${VERSION}-rc.1`).stderr, /no-cosign not found/);
  assert.match(release('latest').stderr, /is not a semantic version/);
});
