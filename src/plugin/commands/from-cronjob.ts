// `from-cronjob NAME [--apply] [--suspend-source]`: migrate a CronJob. Prints the SecondCronJob as YAML
// (warnings on stderr, so the output can be piped to kubectl apply) or applies it server-side.
import type { SecondCronJob } from '../../api/resources.js';
import type { Output } from '../args.js';
import type { PluginContext } from '../context.js';
import { type CronJob, fromCronJob } from '../cronjob-conversion.js';
import { emit, serialize } from '../print.js';
import { FIELD_MANAGER, call, scjPath, serverSideApply } from '../resources.js';

export async function fromCronJobCommand(cmd: { resource: string; apply: boolean; suspendSource: boolean; output: Output }, ctx: PluginContext): Promise<void> {
  const { rest, namespace } = await ctx.target();
  const cronJobPath = `/apis/batch/v1/namespaces/${encodeURIComponent(namespace)}/cronjobs/${encodeURIComponent(cmd.resource)}`;
  const cj = await call(rest, () => rest.request<CronJob>({ verb: 'get', path: cronJobPath }));
  const { manifest, warnings } = fromCronJob(cj);
  for (const w of warnings) ctx.warn(w);
  const id = `secondcronjob.secondcron.io/${manifest.metadata.name}`;
  if (!cmd.apply) {
    emit(ctx, cmd.output, manifest, () => [id], () => serialize(manifest, 'yaml'));
    return;
  }
  const applied = await call(rest, () => serverSideApply<SecondCronJob>(rest, scjPath(namespace, manifest.metadata.name), manifest));
  emit(ctx, cmd.output, applied, () => [id], () => `${id} serverside-applied`);
  if (cmd.suspendSource) {
    await call(rest, () => rest.request({ verb: 'patch', patchType: 'merge', path: cronJobPath, body: { spec: { suspend: true } }, query: { fieldManager: FIELD_MANAGER } }));
    ctx.out(`cronjob.batch/${cmd.resource} suspended`);
  }
}
