// The krew plugin manifest (plugins/secondcron.yaml in a krew index) for the single-executable
// plugin archives `make release` builds. Pure: the caller passes the archives' digests.
import { dump } from 'js-yaml';

export interface PluginArchive {
  os: 'linux' | 'darwin' | 'windows';
  arch: 'amd64' | 'arm64';
  /** Where users download it from (krew checks the sha256 of what it gets). */
  uri: string;
  sha256: string;
  /** The executable inside the archive. */
  bin: string;
}

export interface KrewManifestInput {
  version: string;
  homepage: string;
  archives: readonly PluginArchive[];
}

/** krew's version rule: semver with a leading v. */
const KREW_VERSION = /^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

export function krewManifest(input: KrewManifestInput): string {
  const version = input.version.startsWith('v') ? input.version : `v${input.version}`;
  if (!KREW_VERSION.test(version)) throw new Error(`krew needs a semantic version, got ${input.version}`);
  if (input.archives.length === 0) throw new Error('a krew manifest needs at least one platform');
  for (const a of input.archives) {
    if (!/^[0-9a-f]{64}$/.test(a.sha256)) throw new Error(`${a.uri}: sha256 must be 64 lower-case hex digits`);
  }
  const manifest = {
    apiVersion: 'krew.googlecontainertools.github.com/v1alpha2',
    kind: 'Plugin',
    metadata: { name: 'secondcron' },
    spec: {
      version,
      homepage: input.homepage,
      shortDescription: 'Inspect and drive SecondCronJobs (cron, seconds)',
      description: [
        'Works with the secondcron operator\'s SecondCronJobs: the next fire times of a schedule',
        '(also from a file, without a cluster), validation with the operator\'s own verdict, a manual',
        'run, suspend and resume, Job history with trigger latency, and migration from a CronJob.',
        'A single executable: no Node.js needed.',
      ].join('\n'),
      platforms: input.archives.map((a) => ({
        selector: { matchLabels: { os: a.os, arch: a.arch } },
        uri: a.uri,
        sha256: a.sha256,
        files: [{ from: a.bin, to: '.' }, { from: 'LICENSE', to: '.' }],
        bin: a.bin,
      })),
    },
  };
  return dump(manifest, { lineWidth: -1, noRefs: true });
}
