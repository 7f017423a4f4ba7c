// Which build this is: the package version and the git commit it was built from. `make build`
// writes the commit next to the compiled modules (dist/build-info.json, from `git rev-parse`); a
// build from outside a git checkout (the Dockerfile's, a tarball) has no such file: "unknown".
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BuildInfo {
  version: string;
  commit: string;
}

const UNKNOWN = 'unknown';

/**
 * Set at bundle time in the plugin's single executable (release/plugin-executable.ts, esbuild's
 * `define`): there is no file next to the module there. Undeclared everywhere else.
 */
declare const SECONDCRON_BUILD_INFO: BuildInfo | undefined;

export function buildInfo(moduleDir?: string): BuildInfo {
  if (moduleDir === undefined && typeof SECONDCRON_BUILD_INFO !== 'undefined') return SECONDCRON_BUILD_INFO;
  const dir = moduleDir ?? dirname(fileURLToPath(import.meta.url));
  return { version: packageVersion(dir), commit: commitNextTo(dir) };
}

/** "secondcron 0.1.0 (commit 1a2b3c4d5e6f)": what --version prints. */
export function versionLine(program: string, info: BuildInfo = buildInfo()): string {
  return `${program} ${info.version} (commit ${info.commit})`;
}

function commitNextTo(moduleDir: string): string {
  const file = join(moduleDir, 'build-info.json');
  if (!existsSync(file)) return UNKNOWN;
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
  const commit = parsed && typeof parsed === 'object' && 'commit' in parsed ? parsed.commit : undefined;
  return typeof commit === 'string' && commit !== '' ? commit : UNKNOWN;
}

/** Our package.json is the nearest one above the compiled module (dist/, build/src/ or the image's /app/dist). */
function packageVersion(moduleDir: string): string {
  for (let dir = moduleDir; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
      const version = parsed && typeof parsed === 'object' && 'version' in parsed ? parsed.version : undefined;
      return typeof version === 'string' ? version : UNKNOWN;
    }
    if (dirname(dir) === dir) return UNKNOWN;
  }
}
