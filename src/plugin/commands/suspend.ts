// `suspend NAME` / `resume NAME`: spec.suspend, as `kubectl patch` would set it.
import type { SecondCronJob } from '../../api/resources.js';
import type { DryRun, Output } from '../args.js';
import type { PluginContext } from '../context.js';
import { emit } from '../print.js';
import { call, dryRunSuffix, getSecondCronJob, scjPath, writeQuery } from '../resources.js';

export async function setSuspended(cmd: { resource: string; dryRun: DryRun; output: Output }, suspend: boolean, ctx: PluginContext): Promise<void> {
  const { rest, namespace } = await ctx.target();
  const before = await getSecondCronJob(rest, namespace, cmd.resource);
  const unchanged = (before.spec.suspend === true) === suspend;
  let after: SecondCronJob = { ...before, spec: { ...before.spec, suspend } };
  if (!unchanged && cmd.dryRun !== 'client') {
    after = await call(rest, () =>
      rest.request<SecondCronJob>({ verb: 'patch', patchType: 'merge', path: scjPath(namespace, cmd.resource), body: { spec: { suspend } }, query: writeQuery(cmd.dryRun) }),
    );
  }
  const id = `secondcronjob.secondcron.io/${cmd.resource}`;
  emit(ctx, cmd.output, after, () => [id], () => `${id} ${suspend ? 'suspended' : 'resumed'}${unchanged ? ' (no change)' : dryRunSuffix(cmd.dryRun)}`);
}
