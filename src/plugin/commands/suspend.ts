// `suspend NAME` / `resume NAME`: spec.suspend, as `kubectl patch` would set it.
import type { SecondCronJob } from '../../controller/api.js';
import type { PluginContext } from '../context.js';
import { FIELD_MANAGER, call, scjPath } from '../resources.js';

export async function setSuspended(cmd: { resource: string }, suspend: boolean, ctx: PluginContext): Promise<void> {
  const { rest, namespace } = await ctx.target();
  const before = await call(rest, () => rest.request<SecondCronJob>({ verb: 'get', path: scjPath(namespace, cmd.resource) }));
  const unchanged = (before.spec.suspend === true) === suspend;
  if (!unchanged) {
    await call(rest, () =>
      rest.request({ verb: 'patch', patchType: 'merge', path: scjPath(namespace, cmd.resource), body: { spec: { suspend } }, query: { fieldManager: FIELD_MANAGER } }),
    );
  }
  ctx.out(`secondcronjob.secondcron.io/${cmd.resource} ${suspend ? 'suspended' : 'resumed'}${unchanged ? ' (no change)' : ''}`);
}
