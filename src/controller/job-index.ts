// Owned Jobs grouped by their SecondCronJob ("<namespace>/<name>"), fed by the Job reflector. A Job
// whose owner label changes (relabelled by hand) leaves its old owner's group.
import { type Job, LABEL_OWNER } from '../api/resources.js';

export class JobIndex {
  private readonly byOwner = new Map<string, Map<string, Job>>();
  /** "<namespace>/<job name>" → owner key, to find a relabelled Job's old group. */
  private readonly ownerOf = new Map<string, string>();

  static ownerKey(job: Job): string | undefined {
    const owner = job.metadata.labels?.[LABEL_OWNER];
    return owner ? `${job.metadata.namespace}/${owner}` : undefined;
  }

  /** Indexes the Job; previousKey is the owner it was indexed under before, when that changed. */
  put(job: Job): { key: string | undefined; previousKey: string | undefined } {
    const id = `${job.metadata.namespace}/${job.metadata.name}`;
    const key = JobIndex.ownerKey(job);
    const before = this.ownerOf.get(id);
    const previousKey = before !== undefined && before !== key ? before : undefined;
    if (previousKey !== undefined) this.drop(previousKey, id, job.metadata.name);
    if (!key) return { key, previousKey };
    let jobs = this.byOwner.get(key);
    if (!jobs) this.byOwner.set(key, (jobs = new Map()));
    jobs.set(job.metadata.name, job);
    this.ownerOf.set(id, key);
    return { key, previousKey };
  }

  /** Removes the Job; returns the owner key it was indexed under. */
  remove(job: Job): string | undefined {
    const id = `${job.metadata.namespace}/${job.metadata.name}`;
    const key = this.ownerOf.get(id);
    if (key !== undefined) this.drop(key, id, job.metadata.name);
    return key;
  }

  has(key: string, name: string): boolean {
    return this.byOwner.get(key)?.has(name) ?? false;
  }

  jobsOf(key: string): Job[] {
    return [...(this.byOwner.get(key)?.values() ?? [])];
  }

  /** Jobs indexed. */
  get size(): number {
    return this.ownerOf.size;
  }

  private drop(key: string, id: string, name: string): void {
    this.ownerOf.delete(id);
    const jobs = this.byOwner.get(key);
    jobs?.delete(name);
    if (jobs?.size === 0) this.byOwner.delete(key);
  }
}
