// `run NAME [--job-name JOB] [--env K=V … [--container C]]`: a Job now, from the template, like
// `kubectl create job --from=cronjob/NAME`, optionally with environment variables set or replaced
// (recorded in the secondcron.io/env-overrides annotation). The operator owns it like any of its Jobs
// (active list, concurrency policy, history limits).
import { type Job, type JobManifest, jobsPath } from '../../api/resources.js';
import { buildManualJob } from '../../controller/job-builder.js';
import { isAlreadyExists } from '../../kube/api-error.js';
import type { DryRun, Output } from '../args.js';
import type { PluginContext } from '../context.js';
import { EnvOverrideError, type EnvOverrides, applyEnvOverrides } from '../env-overrides.js';
import { PluginError } from '../errors.js';
import { emit } from '../print.js';
import { asPluginError, dryRunSuffix, getSecondCronJob, writeQuery } from '../resources.js';

export async function runCommand(cmd: { resource: string; jobName?: string; envOverrides?: EnvOverrides; dryRun: DryRun; output: Output }, ctx: PluginContext): Promise<void> {
  const { rest, namespace } = await ctx.target();
  const scj = await getSecondCronJob(rest, namespace, cmd.resource);
  if (scj.metadata.deletionTimestamp) throw new PluginError(`secondcronjob.secondcron.io/${cmd.resource} is being deleted`);
  const build = (): JobManifest => {
    const job = buildManualJob(scj, ctx.random);
    const named = cmd.jobName === undefined ? job : { ...job, metadata: { ...job.metadata, name: cmd.jobName } };
    if (cmd.envOverrides === undefined) return named;
    try {
      return applyEnvOverrides(named, cmd.envOverrides);
    } catch (err) {
      if (err instanceof EnvOverrideError) throw new PluginError(`secondcronjob.secondcron.io/${cmd.resource}: ${err.message}`);
      throw err;
    }
  };
  const show = (job: Job | JobManifest): void =>
    emit(ctx, cmd.output, job, () => [`job.batch/${job.metadata.name}`], () => `job.batch/${job.metadata.name} created${dryRunSuffix(cmd.dryRun)}`);
  if (cmd.dryRun === 'client') {
    show(build());
    return;
  }
  // A random name could already be taken (1 in 8 million per try): try again with another. A name
  // the user chose is theirs to change.
  for (let attempt = 0; ; attempt++) {
    try {
      show(await rest.request<Job>({ verb: 'create', path: jobsPath(namespace), body: build(), query: writeQuery(cmd.dryRun) }));
      return;
    } catch (err) {
      if (!isAlreadyExists(err) || cmd.jobName !== undefined || attempt >= 2) throw asPluginError(err, rest);
    }
  }
}
