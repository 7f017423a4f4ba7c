// Where the API server is and how to authenticate to it.
//
// The common cases — in-cluster (the Helm chart) and a kubeconfig whose user is a token, a token file
// or a client certificate — are read here. Everything else a kubeconfig can say (exec plugins,
// auth providers, proxies, several merged files) goes to @kubernetes/client-node, imported only
// then: loading it pulls in its whole generated API, ~60 MiB of RSS that an operator watching
// thousands of schedules should not carry for nothing.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { createSecureContext } from 'node:tls';

import { load as parseYaml } from 'js-yaml';
import { Agent, type Dispatcher } from 'undici';

export interface Credentials {
  headers: Record<string, string>;
  dispatcher: Dispatcher;
}

export interface KubeConnection {
  /** API server URL without a trailing slash. */
  readonly server: string;
  /** Where this came from, for the start-up log. */
  readonly source: string;
  /** Current credentials; called again every few seconds so rotated tokens are picked up. */
  credentials(): Promise<Credentials>;
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

interface TlsOptions {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  rejectUnauthorized?: boolean;
  servername?: string;
}

/** One keep-alive pool for the life of the process; only the headers change. */
class DirectConnection implements KubeConnection {
  private readonly dispatcher: Dispatcher;

  constructor(
    readonly server: string,
    readonly source: string,
    tls: TlsOptions,
    private readonly headers: () => Record<string, string>,
  ) {
    this.server = server.replace(/\/+$/, '');
    // One TLS context for every connection: building it (parsing the CA bundle) per connection was
    // 4 % of the operator's CPU in a 500-Job burst.
    const { rejectUnauthorized, servername, ...material } = tls;
    const secureContext = createSecureContext(material);
    this.dispatcher = keepConnections(
      new Agent({
        connect: { secureContext, ...(rejectUnauthorized === false ? { rejectUnauthorized } : {}), ...(servername ? { servername } : {}) },
        // Idle connections stay for a minute (client-go keeps them 90 s): a burst after a quiet spell
        // should not start with a TLS handshake per request.
        keepAliveTimeout: 60_000,
      }),
    );
  }

  credentials(): Promise<Credentials> {
    return Promise.resolve({ headers: this.headers(), dispatcher: this.dispatcher });
  }
}

/**
 * undici closes a connection after any request whose method "does not expect a body" carries one —
 * and every DELETE of ours carries DeleteOptions (propagation policy, uid precondition), as client-go's
 * do. The API server reads those bodies, so the connection is sound: without this, each history
 * deletion cost a new TLS handshake (12 % of the operator's CPU at 100 Jobs/s).
 */
export function keepConnections(dispatcher: Dispatcher): Dispatcher {
  return dispatcher.compose((dispatch) => (opts, handler) => dispatch({ ...opts, reset: false }, handler));
}

/**
 * --kubeconfig, else in-cluster when KUBERNETES_SERVICE_HOST is set, else $KUBECONFIG, else
 * ~/.kube/config — the order client-go uses for controllers.
 */
export async function loadConnection(kubeconfigPath: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<KubeConnection> {
  if (kubeconfigPath) return fromKubeconfigFile(kubeconfigPath);
  if (env.KUBERNETES_SERVICE_HOST) return inCluster(env);
  const paths = (env.KUBECONFIG ?? '').split(delimiter).filter(Boolean);
  if (paths.length > 1) return viaClientNode(undefined, `$KUBECONFIG (${paths.length} files, merged by client-node)`);
  return fromKubeconfigFile(paths[0] ?? join(homedir(), '.kube', 'config'));
}

function inCluster(env: NodeJS.ProcessEnv): KubeConnection {
  const host = env.KUBERNETES_SERVICE_HOST as string;
  const port = env.KUBERNETES_SERVICE_PORT ?? '443';
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const tokenPath = join(SERVICE_ACCOUNT_DIR, 'token');
  // Bound service-account tokens are rotated by the kubelet: re-read, never cached for good.
  return new DirectConnection(server, 'in-cluster service account', { ca: readFileSync(join(SERVICE_ACCOUNT_DIR, 'ca.crt')) }, () => ({
    authorization: `Bearer ${readFileSync(tokenPath, 'utf8').trim()}`,
  }));
}

type Fields = Record<string, unknown>;

/** The parts of a kubeconfig file we read. */
interface KubeconfigFile {
  'current-context'?: string;
  clusters?: { name: string; cluster?: Fields }[];
  users?: { name: string; user?: Fields }[];
  contexts?: { name: string; context?: Fields }[];
}

/** The fields we understand; anything else in a user or cluster entry means client-node. */
const SIMPLE_USER_FIELDS = new Set(['token', 'tokenFile', 'client-certificate', 'client-certificate-data', 'client-key', 'client-key-data', 'username', 'password']);
const SIMPLE_CLUSTER_FIELDS = new Set(['server', 'certificate-authority', 'certificate-authority-data', 'insecure-skip-tls-verify', 'tls-server-name']);

export async function fromKubeconfigFile(path: string): Promise<KubeConnection> {
  return readKubeconfig(path) ?? viaClientNode(path, `kubeconfig ${path} (auth through client-node)`);
}

/** A kubeconfig with a token, token file, basic or client-certificate user; null if it needs client-node. */
export function readKubeconfig(path: string): KubeConnection | null {
  if (!existsSync(path)) throw new Error(`kubeconfig ${path} not found (and not running in a cluster)`);
  const doc = parseYaml(readFileSync(path, 'utf8')) as KubeconfigFile | null;
  const contextName = doc?.['current-context'];
  const context = doc?.contexts?.find((c) => c.name === contextName)?.context;
  if (!doc || !context) throw new Error(`kubeconfig ${path}: no current context`);
  const cluster = doc.clusters?.find((c) => c.name === context.cluster)?.cluster;
  const user = doc.users?.find((u) => u.name === context.user)?.user ?? {};
  if (!cluster || typeof cluster.server !== 'string') throw new Error(`kubeconfig ${path}: context ${contextName} has no cluster server`);
  const simple = Object.keys(user).every((k) => SIMPLE_USER_FIELDS.has(k)) && Object.keys(cluster).every((k) => SIMPLE_CLUSTER_FIELDS.has(k));
  if (!simple) return null;

  const base = dirname(path);
  const bytes = (data: unknown, file: unknown): Buffer | undefined => {
    if (typeof data === 'string') return Buffer.from(data, 'base64');
    if (typeof file === 'string') return readFileSync(isAbsolute(file) ? file : join(base, file));
    return undefined;
  };
  const tls: TlsOptions = {
    ca: bytes(cluster['certificate-authority-data'], cluster['certificate-authority']),
    cert: bytes(user['client-certificate-data'], user['client-certificate']),
    key: bytes(user['client-key-data'], user['client-key']),
  };
  if (cluster['insecure-skip-tls-verify'] === true) tls.rejectUnauthorized = false;
  if (typeof cluster['tls-server-name'] === 'string') tls.servername = cluster['tls-server-name'];

  const tokenFile = typeof user.tokenFile === 'string' ? (isAbsolute(user.tokenFile) ? user.tokenFile : join(base, user.tokenFile)) : undefined;
  const headers = (): Record<string, string> => {
    if (typeof user.token === 'string') return { authorization: `Bearer ${user.token}` };
    if (tokenFile) return { authorization: `Bearer ${readFileSync(tokenFile, 'utf8').trim()}` };
    if (typeof user.username === 'string') {
      return { authorization: `Basic ${Buffer.from(`${user.username}:${String(user.password ?? '')}`).toString('base64')}` };
    }
    return {};
  };
  return new DirectConnection(cluster.server, `kubeconfig ${path}`, tls, headers);
}

async function viaClientNode(path: string | undefined, source: string): Promise<KubeConnection> {
  const { clientNodeConnection } = await import('./client-node-connection.js');
  return clientNodeConnection(path, source);
}
