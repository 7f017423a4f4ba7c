// A real OCI registry on 127.0.0.1 for the release tests: go-containerregistry's pkg/registry
// (test/cluster/go/registry, built by build-release-tools.sh), blobs in a temp dir, a free port it
// picks itself. Stopped, and its directory removed, by the test (and by the harness on a signal).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { ManagedProcess } from './managed-process.js';
import { track } from './process-registry.js';

export class LocalRegistry {
  private constructor(
    /** host:port, as image references and oci:// URLs name it. */
    readonly host: string,
    private readonly proc: ManagedProcess,
    private readonly dir: string,
    private readonly untrack: () => void,
  ) {}

  static async start(toolsDir: string, timeoutMs = 30_000): Promise<LocalRegistry> {
    const dir = mkdtempSync(join(tmpdir(), 'secondcron-registry-'));
    const logPath = join(dir, 'registry.log');
    const proc = new ManagedProcess({ name: 'registry', command: join(toolsDir, 'registry'), args: ['--blobs', join(dir, 'blobs')], logPath });
    const untrack = track({ name: proc.name, dispose: () => proc.stop(), killNow: () => proc.killNow() });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const host = /^listening on (127\.0\.0\.1:\d+)$/m.exec(readFileSync(logPath, 'utf8'))?.[1];
      if (host) {
        const registry = new LocalRegistry(host, proc, dir, untrack);
        // The Distribution API's version check: 200 once it serves.
        const res = await fetch(`http://${host}/v2/`).catch(() => undefined);
        if (res?.status === 200) return registry;
      }
      if (!proc.running || Date.now() > deadline) {
        const why = proc.running ? `not serving after ${timeoutMs} ms` : proc.describeExit();
        await proc.stop();
        untrack();
        rmSync(dir, { recursive: true, force: true });
        throw new Error(`the test registry is ${why}:\n${proc.logTail(20)}`);
      }
      await sleep(100);
    }
  }

  /** Tags of a repository, from the registry's own API. */
  async tags(repository: string): Promise<string[]> {
    const res = await fetch(`http://${this.host}/v2/${repository}/tags/list`);
    if (res.status === 404) return [];
    if (!res.ok) throw new Error(`GET tags of ${repository}: HTTP ${res.status}`);
    return ((await res.json()) as { tags?: string[] }).tags ?? [];
  }

  /** The registry's request log: which blobs and manifests were fetched, e.g. by containerd. */
  log(): string {
    return readFileSync(this.proc.logPath, 'utf8');
  }

  async stop(): Promise<void> {
    await this.proc.stop();
    this.untrack();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
