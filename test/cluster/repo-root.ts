// The repository root, found from the calling module whether it runs from build/ or the source tree.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the repository root (package.json) above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
}
