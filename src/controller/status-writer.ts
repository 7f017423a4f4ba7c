// Writes status through the status subresource, coalesced per SecondCronJob: at most one patch in
// flight and one per `minIntervalMs` for each, always computed from the newest state at write time,
// and skipped when nothing changed. Status never delays Job creation: it waits for a create burst to
// be acknowledged (WritePriority), then writes what is true by then.
import pLimit from 'p-limit';

import type { MonotonicClock, Timers } from '../clock/clock.js';
import type { Logger } from '../log.js';
import { isNotFound } from '../kube/api-error.js';
import type { KubeRest } from '../kube/rest.js';
import { type SecondCronJob, type SecondCronJobStatus, collectionPath } from './api.js';
import { statusEquals } from './status.js';
import type { WritePriority } from './write-priority.js';

export interface StatusSource {
  /** The resource as cached and the status it should have now; undefined = nothing to write. */
  desired(key: string): { scj: SecondCronJob; status: SecondCronJobStatus } | undefined;
}

interface KeyState {
  dirty: boolean;
  running: boolean;
  lastWriteMono: number;
  /** What we patched, and the resourceVersion of the cached object it was computed from. */
  lastWritten?: { status: SecondCronJobStatus; from: string };
}

export class StatusWriter {
  private readonly keys = new Map<string, KeyState>();
  private readonly limit = pLimit(4);

  constructor(
    private readonly rest: KubeRest,
    private readonly source: StatusSource,
    private readonly mono: MonotonicClock,
    private readonly timers: Timers,
    private readonly log: Logger,
    private readonly priority: WritePriority,
    private readonly minIntervalMs = 1000,
  ) {}

  markDirty(key: string): void {
    let st = this.keys.get(key);
    if (!st) {
      st = { dirty: false, running: false, lastWriteMono: -Infinity };
      this.keys.set(key, st);
    }
    if (st.dirty || st.running) {
      st.dirty = true;
      return;
    }
    st.dirty = true;
    const wait = Math.max(0, st.lastWriteMono + this.minIntervalMs - this.mono.nowMs());
    this.timers.set(wait, () => void this.flush(key));
  }

  forget(key: string): void {
    this.keys.delete(key);
  }

  private async flush(key: string): Promise<void> {
    const st = this.keys.get(key);
    if (!st || st.running) return;
    st.dirty = false;
    st.running = true;
    try {
      await this.limit(() => this.write(key, st));
    } catch (err) {
      if (!isNotFound(err)) this.log.warn('status update failed', { key, err });
    } finally {
      st.running = false;
      st.lastWriteMono = this.mono.nowMs();
      if (st.dirty && this.keys.has(key)) {
        st.dirty = false;
        this.markDirty(key);
      }
    }
  }

  private async write(key: string, st: KeyState): Promise<void> {
    await this.priority.calm();
    const want = this.source.desired(key);
    if (!want) return;
    if (statusEquals(want.scj.status, want.status)) return;
    // Our own patch not in the cache yet: the cache still holds the version we computed it from.
    // Once the cache moved on, it is the truth, also when someone else (a previous leader, a human)
    // wrote status since: a leader elected again must repair it, not trust its memory.
    const sameAsOurs = st.lastWritten && st.lastWritten.from === want.scj.metadata.resourceVersion && statusEquals(st.lastWritten.status, want.status);
    if (sameAsOurs) return;
    // Merge patch: keys we no longer want must be sent as null to be removed.
    const patch: Record<string, unknown> = { ...want.status };
    for (const k of Object.keys(want.scj.status ?? {})) if (!(k in patch)) patch[k] = null;
    const { namespace, name } = want.scj.metadata;
    await this.rest.request({
      verb: 'patch',
      path: `${collectionPath(namespace)}/${name}/status`,
      body: { status: patch },
      patchType: 'merge',
      timeoutMs: 10_000,
      metadataOnly: true,
    });
    st.lastWritten = { status: want.status, from: want.scj.metadata.resourceVersion };
  }
}
