// `from-cronjob NAME [--apply] [--suspend-source]`: migrate a CronJob. Prints the SecondCronJob as YAML
// (warnings on stderr, so the output can be piped to kubectl apply) or applies it server-side.
import type { PluginContext } from '../context.js';
import { type CronJob, fromCronJob } from '../cronjob-conversion.js';
import { serialize } from '../print.js';
import { FIELD_MANAGER, call, scjPath, serverSideApply } from '../resources.js';

export async function fromCronJobCommand(cmd: { resource: string; apply: boolean; suspendSource: boolean }, ctx: PluginContext): Promise<void> {
  const { rest, namespace } = await ctx.target();
  const cronJobPath = `/apis/batch/v1/namespaces/${encodeURIComponent(namespace)}/cronjobs/${encodeURIComponent(cmd.resource)}`;
  const cj = await call(rest, () => rest.request<CronJob>({ verb: 'get', path: cronJobPath }));
  const { manifest, warnings } = fromCronJob(cj);
  for (const w of warnings) ctx.warn(w);
  if (!cmd.apply) {
    ctx.out(serialize(manifest, 'yaml'));
    return;
  }
  await call(rest, () => serverSideApply(rest, scjPath(namespace, manifest.metadata.name), manifest));
  ctx.out(`secondcronjob.secondcron.io/${manifest.metadata.name} serverside-applied`);
  if (cmd.suspendSource) {
    await call(rest, () => rest.request({ verb: 'patch', patchType: 'merge', path: cronJobPath, body: { spec: { suspend: true } }, query: { fieldManager: FIELD_MANAGER } }));
    ctx.out(`cronjob.batch/${cmd.resource} suspended`);
  }
}
