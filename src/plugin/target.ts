// Which cluster, user and namespace `kubectl secondcron` talks to, by kubectl's rules (src/kube's
// loader): --kubeconfig (one file) or $KUBECONFIG (several files, first definition wins) or
// ~/.kube/config; --context or the current context; -n, else the context's namespace, else "default".
import { connectionForSelection } from '../kube/connection.js';
import { KubeconfigError } from '../kube/kubeconfig.js';
import { KubeRest } from '../kube/rest.js';
import type { ConnectionFlags } from './args.js';
import { PluginError } from './errors.js';

export interface Target {
  rest: KubeRest;
  namespace: string;
}

export async function connect(flags: ConnectionFlags, userAgent: string): Promise<Target> {
  try {
    const { connection, kubeconfig } = await connectionForSelection({
      ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}),
      ...(flags.context ? { context: flags.context } : {}),
    });
    return { rest: new KubeRest(connection, { userAgent }), namespace: flags.namespace || kubeconfig.namespace };
  } catch (err) {
    if (err instanceof KubeconfigError) throw new PluginError(`no cluster: ${err.message}`);
    throw err;
  }
}
