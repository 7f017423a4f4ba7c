// SecondCronJobs from -f files: YAML (several documents) or JSON, a List's items, "-" for stdin.
import { readFileSync } from 'node:fs';

import { loadAll } from 'js-yaml';

import { API_VERSION, KIND, type SecondCronJob } from '../api/resources.js';
import { PluginError } from './errors.js';

export interface FileResource {
  /** "file.yaml" or "file.yaml#2" (the document's position), for messages. */
  origin: string;
  object: SecondCronJob;
}

export function readResources(files: readonly string[], readStdin: () => string): FileResource[] {
  const out: FileResource[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = file === '-' ? readStdin() : readFileSync(file, 'utf8');
    } catch (err) {
      throw new PluginError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
    }
    let docs: unknown[];
    try {
      docs = loadAll(text);
    } catch (err) {
      throw new PluginError(`${file} is not valid YAML or JSON: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
    }
    const objects = docs.filter((d) => d !== null && d !== undefined).flatMap((d) => (isList(d) ? d.items : [d]));
    objects.forEach((object, i) => {
      const origin = objects.length > 1 ? `${file}#${i + 1}` : file;
      if (!isObject(object)) throw new PluginError(`${origin}: expected a Kubernetes object, got ${JSON.stringify(object).slice(0, 60)}`);
      if (object.kind !== KIND || object.apiVersion !== API_VERSION) return; // other kinds in the same file are not ours to judge
      if (!isObject(object.metadata) || typeof object.metadata.name !== 'string' || !isObject(object.spec)) {
        throw new PluginError(`${origin}: a SecondCronJob needs metadata.name and spec`);
      }
      out.push({ origin, object: object as unknown as SecondCronJob });
    });
  }
  if (out.length === 0) throw new PluginError(`no ${KIND} (${API_VERSION}) in ${files.join(', ')}`);
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isList(v: unknown): v is { items: unknown[] } {
  return isObject(v) && typeof v.kind === 'string' && v.kind.endsWith('List') && Array.isArray(v.items);
}
