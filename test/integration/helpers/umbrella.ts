// A parent ("umbrella") chart that depends on helm/secondcron the way platform teams bundle
// operators: `condition: secondcron.enabled`, shared `global:` values, the subchart's own values
// under `secondcron:`, and one object of its own. Built with `helm dependency update` (a file://
// repository, so no network), as a user would build it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { CHART_DIR, helmOk } from './helm.js';

export const UMBRELLA_GLOBALS = {
  imageRegistry: 'mirror.example',
  imagePullSecrets: ['parent-pull'],
  commonLabels: { 'platform.example/suite': 'ops' },
  priorityClassName: 'umbrella-high',
  // A global meant for another subchart: allowed, ignored.
  storageClass: 'fast',
};

/** The parent's own object, rendered whether secondcron is enabled or not. */
export const UMBRELLA_OWN = 'ConfigMap/platform-settings';

export interface Umbrella {
  dir: string;
  remove(): void;
}

/** Writes the parent chart to a temporary directory and vendors secondcron into its charts/. */
export async function buildUmbrella(secondcronValues: Record<string, unknown>): Promise<Umbrella> {
  const dir = mkdtempSync(join(tmpdir(), 'secondcron-umbrella-'));
  const remove = (): void => rmSync(dir, { recursive: true, force: true });
  try {
    // JSON is YAML.
    writeFileSync(join(dir, 'Chart.yaml'), JSON.stringify({
      apiVersion: 'v2',
      name: 'platform',
      version: '1.0.0',
      dependencies: [{ name: 'secondcron', version: '0.1.0', repository: `file://${CHART_DIR}`, condition: 'secondcron.enabled' }],
    }));
    writeFileSync(join(dir, 'values.yaml'), JSON.stringify({ global: UMBRELLA_GLOBALS, secondcron: { enabled: true, ...secondcronValues } }));
    mkdirSync(join(dir, 'templates'));
    writeFileSync(join(dir, 'templates', 'settings.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: platform-settings\ndata:\n  suite: {{ .Values.global.commonLabels | toJson | quote }}\n');
    await helmOk(['dependency', 'update', dir]);
    return { dir, remove };
  } catch (err) {
    remove();
    throw err;
  }
}
