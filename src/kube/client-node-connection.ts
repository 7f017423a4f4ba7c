// The fallback for kubeconfigs our own loader does not read (exec plugins, auth providers, proxies,
// merged files): @kubernetes/client-node does the authentication. Imported lazily by connection.ts.
import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { Agent, type Dispatcher } from 'undici';

import { type Credentials, type KubeConnection, keepConnections } from './connection.js';

export function clientNodeConnection(path: string | undefined, source: string): KubeConnection {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error(`${source}: no current cluster`);
  const server = cluster.server.replace(/\/+$/, '');
  let dispatcher: Dispatcher | undefined;
  return {
    server,
    source,
    async credentials(): Promise<Credentials> {
      const ctx = new RequestContext(server, HttpMethod.GET);
      await kc.applySecurityAuthentication(ctx); // runs exec plugins / refreshes provider tokens as needed
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(ctx.getHeaders())) headers[k] = String(v);
      // Keep the first dispatcher: client-node builds a new one (a new TLS connection) per call.
      dispatcher ??= keepConnections((ctx.getDispatcher() as Dispatcher | undefined) ?? new Agent());
      return { headers, dispatcher };
    },
  };
}
