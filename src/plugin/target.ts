// Which cluster, user and namespace `kubectl secondcron` talks to, by kubectl's rules (src/kube's
// loader): --kubeconfig (one file) or $KUBECONFIG (several files, first definition wins) or
// ~/.kube/config; --context or the current context; --cluster, --user, --server, --token,
// --insecure-skip-tls-verify over what the context names; -n, else the context's namespace, else
// "default". --as/--as-group/--as-uid impersonate (the headers kubectl sends), --request-timeout
// bounds every request.
import { type Credentials, type KubeConnection, connectionForSelection } from '../kube/connection.js';
import { KubeconfigError } from '../kube/kubeconfig.js';
import { KubeRest } from '../kube/rest.js';
import type { ConnectionFlags } from './args.js';
import { PluginError } from './errors.js';

export interface Target {
  rest: KubeRest;
  namespace: string;
}

/** kubectl's default --request-timeout is 0: no timeout of its own. */
const NO_TIMEOUT_MS = 2 ** 31 - 1;

export async function connect(flags: ConnectionFlags, userAgent: string): Promise<Target> {
  try {
    const { connection, kubeconfig } = await connectionForSelection({
      ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}),
      ...(flags.context ? { context: flags.context } : {}),
      ...(flags.cluster ? { cluster: flags.cluster } : {}),
      ...(flags.user ? { user: flags.user } : {}),
      ...(flags.server ? { server: flags.server } : {}),
      ...(flags.token ? { token: flags.token } : {}),
      ...(flags.insecureSkipTlsVerify ? { insecureSkipTlsVerify: true } : {}),
    });
    const timeoutMs = flags.requestTimeoutMs === undefined || flags.requestTimeoutMs === 0 ? NO_TIMEOUT_MS : flags.requestTimeoutMs;
    return { rest: new KubeRest(impersonating(connection, flags), { userAgent, defaultTimeoutMs: timeoutMs }), namespace: flags.namespace || kubeconfig.namespace };
  } catch (err) {
    if (err instanceof KubeconfigError) throw new PluginError(`no cluster: ${err.message}`);
    throw err;
  }
}

/** The Impersonate-* headers of --as, --as-group (repeated) and --as-uid on every request. */
function impersonating(connection: KubeConnection, flags: ConnectionFlags): KubeConnection {
  if (flags.as === undefined) return connection;
  const extra: Record<string, string | string[]> = { 'impersonate-user': flags.as };
  if (flags.asGroups?.length) extra['impersonate-group'] = flags.asGroups;
  if (flags.asUid !== undefined) extra['impersonate-uid'] = flags.asUid;
  return {
    server: connection.server,
    source: connection.source,
    credentials: async (signal?: AbortSignal): Promise<Credentials> => {
      const c = await connection.credentials(signal);
      return { ...c, headers: { ...c.headers, ...extra } };
    },
  };
}
