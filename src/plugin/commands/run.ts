// `run NAME`: a Job now, from the template, like `kubectl create job --from=cronjob/NAME`. The operator
// owns it like any of its Jobs (active list, concurrency policy, history limits).
import { type Job, jobsPath } from '../../controller/api.js';
import { buildManualJob } from '../../controller/job-builder.js';
import { isAlreadyExists } from '../../kube/api-error.js';
import type { PluginContext } from '../context.js';
import { PluginError } from '../errors.js';
import { FIELD_MANAGER, asPluginError, getSecondCronJob } from '../resources.js';

export async function runCommand(cmd: { resource: string }, ctx: PluginContext): Promise<void> {
  const { rest, namespace } = await ctx.target();
  const scj = await getSecondCronJob(rest, namespace, cmd.resource);
  if (scj.metadata.deletionTimestamp) throw new PluginError(`secondcronjob.secondcron.io/${cmd.resource} is being deleted`);
  // A random name could already be taken (1 in 8 million per try): try again with another.
  for (let attempt = 0; ; attempt++) {
    const job = buildManualJob(scj, ctx.random);
    try {
      const created = await rest.request<Job>({ verb: 'create', path: jobsPath(namespace), body: job, query: { fieldManager: FIELD_MANAGER } });
      ctx.out(`job.batch/${created.metadata.name} created`);
      return;
    } catch (err) {
      if (!isAlreadyExists(err) || attempt >= 2) throw asPluginError(err, rest);
    }
  }
}
