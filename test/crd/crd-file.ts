// Reading and writing config/crd/secondcronjobs.secondcron.io.yaml: a hand-written file whose
// spec.jobTemplate is generated (`make crd`). The header comment is kept; the rest is re-dumped.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { dump, load } from 'js-yaml';

import type { Schema } from './structural-schema.js';

export const CRD_FILE = join('config', 'crd', 'secondcronjobs.secondcron.io.yaml');

/**
 * Client-side `kubectl apply` (and Argo CD's default sync) stores the whole object as JSON in the
 * last-applied-configuration annotation; all annotations together may hold 256 KiB.
 */
export const LAST_APPLIED_LIMIT = 262_144;

export function readCrd(path: string): { header: string; crd: Schema } {
  const text = readFileSync(path, 'utf8');
  const header = text.split('\n').filter((line, i, all) => line.startsWith('#') && all.slice(0, i).every((l) => l.startsWith('#'))).join('\n');
  return { header, crd: load(text) as Schema };
}

export function writeCrd(path: string, header: string, crd: Schema): number {
  const text = `${header}\n${dump(crd, { lineWidth: -1, noRefs: true })}`;
  writeFileSync(path, text);
  return Buffer.byteLength(text);
}

export function crdPath(root: string): string {
  return join(root, CRD_FILE);
}
