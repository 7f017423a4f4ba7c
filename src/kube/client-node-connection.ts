// The fallback for kubeconfig users our own loader does not handle (auth providers, proxies):
// @kubernetes/client-node does the authentication. Imported lazily by connection.ts. It gets the
// config already merged and resolved the kubectl way, so it talks to the same cluster. Impersonation
// is ours, not client-node's: it sends `as` but drops as-groups, as-uid and as-user-extra.
import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { dump } from 'js-yaml';
import { Agent, type Dispatcher } from 'undici';

import { untilAborted } from './abortable.js';
import type { Credentials, KubeConnection } from './connection.js';
import { IMPERSONATION_FIELDS, impersonationHeaders } from './impersonation.js';
import type { Fields, ResolvedKubeconfig } from './kubeconfig.js';
import { keepConnections } from './tls-dispatcher.js';

export function clientNodeConnection(resolved: ResolvedKubeconfig, source: string): KubeConnection {
  const { merged } = resolved;
  const kc = new KubeConfig();
  kc.loadFromString(
    dump({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: merged.clusters.map((e) => ({ name: e.name, cluster: e.fields })),
      users: merged.users.map((e) => ({ name: e.name, user: withoutImpersonation(e.fields) })),
      contexts: merged.contexts.map((e) => ({ name: e.name, context: e.fields })),
      'current-context': resolved.contextName,
    }),
  );
  const server = resolved.cluster.server.replace(/\/+$/, '');
  const impersonation = impersonationHeaders(resolved.user.name, resolved.user.fields);
  let dispatcher: Dispatcher | undefined;
  return {
    server,
    source,
    async credentials(signal?: AbortSignal): Promise<Credentials> {
      const ctx = new RequestContext(server, HttpMethod.GET);
      await untilAborted(kc.applySecurityAuthentication(ctx), signal); // refreshes provider tokens as needed
      const headers: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(ctx.getHeaders())) headers[k] = String(v);
      Object.assign(headers, impersonation);
      // Keep the first dispatcher: client-node builds a new one (a new TLS connection) per call.
      dispatcher ??= keepConnections((ctx.getDispatcher() as Dispatcher | undefined) ?? new Agent({ allowH2: false })); // HTTP/1.1: see tls-dispatcher.ts
      return { headers, dispatcher };
    },
  };
}

function withoutImpersonation(fields: Fields): Fields {
  const drop: readonly string[] = IMPERSONATION_FIELDS;
  return Object.fromEntries(Object.entries(fields).filter(([k]) => !drop.includes(k)));
}
