// Owned Jobs grouped by their SecondCronJob ("<namespace>/<name>"), fed by the Job reflector.
import { type Job, LABEL_OWNER } from './api.js';

export class JobIndex {
  private readonly byOwner = new Map<string, Map<string, Job>>();

  static ownerKey(job: Job): string | undefined {
    const owner = job.metadata.labels?.[LABEL_OWNER];
    return owner ? `${job.metadata.namespace}/${owner}` : undefined;
  }

  put(job: Job): string | undefined {
    const key = JobIndex.ownerKey(job);
    if (!key) return undefined;
    let jobs = this.byOwner.get(key);
    if (!jobs) this.byOwner.set(key, (jobs = new Map()));
    jobs.set(job.metadata.name, job);
    return key;
  }

  remove(job: Job): string | undefined {
    const key = JobIndex.ownerKey(job);
    if (!key) return undefined;
    const jobs = this.byOwner.get(key);
    jobs?.delete(job.metadata.name);
    if (jobs?.size === 0) this.byOwner.delete(key);
    return key;
  }

  has(key: string, name: string): boolean {
    return this.byOwner.get(key)?.has(name) ?? false;
  }

  jobsOf(key: string): Job[] {
    return [...(this.byOwner.get(key)?.values() ?? [])];
  }
}
