// Where the API server is and how to authenticate to it.
//
// In-cluster (the Helm chart) and kubeconfig users with a token, a token file, basic auth, client
// certificates (data or files) or an exec plugin, impersonating or not, through an HTTP(S) proxy (the
// cluster's proxy-url, else HTTPS_PROXY/NO_PROXY as client-go reads them) or not, are handled here,
// with client-go's choice of credentials, its refresh rules and its refusals.
// Auth providers and SOCKS proxies go to @kubernetes/client-node, imported only then: loading it pulls in
// its whole generated API, ~60 MiB of RSS that an operator watching thousands of schedules should not
// carry for nothing.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Dispatcher } from 'undici';

import { untilAborted } from './abortable.js';
import { proxyFromEnvironment } from './env-proxy.js';
import { ExecCredentialPlugin, interactiveModeProblem } from './exec-credential.js';
import { IMPERSONATION_FIELDS, impersonationHeaders } from './impersonation.js';
import { type Fields, KubeconfigError, type KubeconfigSelection, type ResolvedKubeconfig, isFields, loadKubeconfig } from './kubeconfig.js';
import { RepeatedWarnings } from './repeated-warnings.js';
import { TokenFile } from './token-file.js';
import { type ClientCert, ClientCertFiles, DispatcherPool, type ServerTls } from './tls-dispatcher.js';

export interface Credentials {
  /** A list is sent as the header repeated (Impersonate-Group). */
  headers: Record<string, string | string[]>;
  dispatcher: Dispatcher;
  /**
   * Present when these credentials can be refreshed (token file, exec plugin): the server answered
   * 401 to them, so the next credentials() call fetches fresh ones and a retry can succeed.
   */
  invalidate?: () => void;
}

export interface KubeConnection {
  /** API server URL without a trailing slash. */
  readonly server: string;
  /** Where this came from, for the start-up log. */
  readonly source: string;
  /**
   * Credentials for one request. The signal is the request's own deadline: a slow token read or a
   * hung exec plugin fails that request in time instead of hanging it.
   */
  credentials(signal?: AbortSignal): Promise<Credentials>;
}

export interface ConnectionOptions {
  env?: NodeJS.ProcessEnv;
  /** Told about refresh trouble that does not fail a request (last good token kept, …). */
  warn?: (message: string, err: Error) => void;
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** What a user entry authenticates with, per request. */
interface UserAuth {
  headers: Record<string, string>;
  /** From an exec plugin; otherwise the connection's own client certificate (if any) is used. */
  clientCert?: ClientCert;
  invalidate?: () => void;
}

class DirectConnection implements KubeConnection {
  readonly server: string;
  private readonly pool: DispatcherPool;

  constructor(
    server: string,
    readonly source: string,
    tls: ServerTls,
    private readonly auth: (signal: AbortSignal | undefined) => Promise<UserAuth>,
    private readonly clientCert: () => ClientCert | undefined = () => undefined,
    /** Sent with every request besides the credentials' own (impersonation). */
    private readonly extraHeaders: Record<string, string | string[]> = {},
  ) {
    this.server = server.replace(/\/+$/, '');
    this.pool = new DispatcherPool(tls);
  }

  async credentials(signal?: AbortSignal): Promise<Credentials> {
    const auth = await this.auth(signal);
    const dispatcher = this.pool.for(auth.clientCert ?? this.clientCert());
    return { headers: { ...auth.headers, ...this.extraHeaders }, dispatcher, ...(auth.invalidate ? { invalidate: auth.invalidate } : {}) };
  }
}

/**
 * In-cluster when KUBERNETES_SERVICE_HOST is set and no --kubeconfig was given, else the kubeconfig
 * kubectl would use (--kubeconfig, else $KUBECONFIG merged, else ~/.kube/config).
 */
export async function loadConnection(kubeconfig: string | undefined, opts: ConnectionOptions = {}): Promise<KubeConnection> {
  const env = opts.env ?? process.env;
  if (!kubeconfig && env.KUBERNETES_SERVICE_HOST) return inCluster(env, opts);
  return connectionFor(loadKubeconfig({ kubeconfig, env }), opts);
}

/** For a caller that chose the file and context itself (`kubectl secondcron --context …`). */
export async function connectionForSelection(selection: KubeconfigSelection, opts: ConnectionOptions = {}): Promise<{ connection: KubeConnection; kubeconfig: ResolvedKubeconfig }> {
  const kubeconfig = loadKubeconfig({ env: opts.env, ...selection });
  return { connection: await connectionFor(kubeconfig, opts), kubeconfig };
}

/** The namespace of the pod's service account, when running in a pod. */
export function inClusterNamespace(): string | undefined {
  try {
    return readFileSync(join(SERVICE_ACCOUNT_DIR, 'namespace'), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

function inCluster(env: NodeJS.ProcessEnv, opts: ConnectionOptions): KubeConnection {
  const host = env.KUBERNETES_SERVICE_HOST as string;
  const port = env.KUBERNETES_SERVICE_PORT ?? '443';
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const warnings = new RepeatedWarnings((message, err) => opts.warn?.(message, err));
  const token = new TokenFile(join(SERVICE_ACCOUNT_DIR, 'token'), { onReadError: (err) => warnings.warn('cannot read the service-account token; keeping the last one', err) });
  const tls: ServerTls = { ca: readFileSync(join(SERVICE_ACCOUNT_DIR, 'ca.crt')) };
  const proxy = proxyFromEnvironment(server, env);
  if (proxy) tls.proxy = proxy;
  return new DirectConnection(server, 'in-cluster service account', tls, (signal) => tokenAuth(token, signal));
}

async function tokenAuth(token: TokenFile, signal: AbortSignal | undefined): Promise<UserAuth> {
  const value = await untilAborted(token.current(), signal);
  return { headers: { authorization: `Bearer ${value}` }, invalidate: () => token.rejected(value) };
}

/** Cluster and user fields handled here; anything else (auth providers, SOCKS proxies) means client-node. */
const DIRECT_USER_FIELDS = new Set<string>(['token', 'tokenFile', 'client-certificate', 'client-certificate-data', 'client-key', 'client-key-data', 'username', 'password', 'exec', ...IMPERSONATION_FIELDS]);
const DIRECT_CLUSTER_FIELDS = new Set(['server', 'certificate-authority', 'certificate-authority-data', 'insecure-skip-tls-verify', 'tls-server-name', 'extensions', 'proxy-url', 'disable-compression']);

async function connectionFor(kc: ResolvedKubeconfig, opts: ConnectionOptions = {}): Promise<KubeConnection> {
  const direct = directConnection(kc, opts);
  if (direct) return direct;
  const { clientNodeConnection } = await import('./client-node-connection.js');
  return clientNodeConnection(kc, `${kc.source}, context ${kc.contextName} (auth through client-node)`);
}

/** One kubeconfig file, synchronously; null if its user needs client-node (auth provider, SOCKS proxy). */
export function readKubeconfig(path: string, opts: ConnectionOptions = {}): KubeConnection | null {
  return directConnection(loadKubeconfig({ kubeconfig: path, env: opts.env }), opts);
}

function directConnection(kc: ResolvedKubeconfig, opts: ConnectionOptions): KubeConnection | null {
  const cluster = kc.cluster.fields;
  const user = kc.user.fields;
  validateCluster(kc);
  validateUser(kc.user.name, user);
  const proxy = typeof cluster['proxy-url'] === 'string' && cluster['proxy-url'] !== '' ? cluster['proxy-url'] : undefined;
  if (
    !Object.keys(user).every((k) => DIRECT_USER_FIELDS.has(k)) ||
    !Object.keys(cluster).every((k) => DIRECT_CLUSTER_FIELDS.has(k)) ||
    (proxy !== undefined && !/^https?:\/\//.test(proxy))
  ) {
    return null;
  }

  const tls: ServerTls = { ca: bytes(cluster['certificate-authority-data'], cluster['certificate-authority']) };
  if (cluster['insecure-skip-tls-verify'] === true) tls.rejectUnauthorized = false;
  if (typeof cluster['tls-server-name'] === 'string') tls.servername = cluster['tls-server-name'];
  const envProxy = proxy ?? proxyFromEnvironment(kc.cluster.server, opts.env ?? process.env);
  if (envProxy) tls.proxy = envProxy;
  const source = `${kc.source}, context ${kc.contextName}`;
  const warnings = new RepeatedWarnings((message, err) => opts.warn?.(message, err));
  const warn = (message: string) => (err: Error): void => warnings.warn(message, err);

  let clientCert: () => ClientCert | undefined = () => undefined;
  if (typeof user['client-certificate'] === 'string' && typeof user['client-key'] === 'string' && !user['client-certificate-data'] && !user['client-key-data']) {
    const files = new ClientCertFiles(user['client-certificate'], user['client-key'], Date.now, warn('client certificate files changed but cannot be used'));
    clientCert = () => files.current();
  } else {
    const cert = bytes(user['client-certificate-data'], user['client-certificate']);
    const key = bytes(user['client-key-data'], user['client-key']);
    if (cert && key) {
      const pair = { cert, key };
      clientCert = () => pair;
    }
  }

  // client-go's transport.HTTPWrappersForConfig: a bearer token (the file re-read, the static token
  // only while the file cannot be read: NewBearerAuthWithRefreshRoundTripper), else basic auth.
  // An exec plugin only when none of token, basic or certificate auth is set
  // (exec.Authenticator.UpdateTransportConfig returns early on HasTokenAuth/HasBasicAuth/HasCertAuth).
  const token = nonEmpty(user.token);
  const tokenFile = nonEmpty(user.tokenFile);
  const username = nonEmpty(user.username);
  let auth: (signal: AbortSignal | undefined) => Promise<UserAuth>;
  if (tokenFile !== undefined) {
    const file = new TokenFile(tokenFile, { fallback: token, onReadError: warn(`cannot read token file ${tokenFile}; keeping the last token`) });
    auth = (signal) => tokenAuth(file, signal);
  } else if (token !== undefined) {
    const headers = { authorization: `Bearer ${token}` };
    auth = () => Promise.resolve({ headers });
  } else if (username !== undefined) {
    const headers = { authorization: `Basic ${Buffer.from(`${username}:${String(user.password ?? '')}`).toString('base64')}` };
    auth = () => Promise.resolve({ headers });
  } else if (isFields(user.exec) && clientCert() === undefined) {
    const plugin = new ExecCredentialPlugin({ exec: user.exec, cluster: { ...cluster, server: kc.cluster.server }, user: kc.user.name, env: opts.env, stderr: (text) => process.stderr.write(text) });
    auth = async (signal): Promise<UserAuth> => {
      const result = await plugin.current(signal);
      const headers: Record<string, string> = result.token ? { authorization: `Bearer ${result.token}` } : {};
      return {
        headers,
        ...(result.clientCert ? { clientCert: result.clientCert } : {}),
        invalidate: () => plugin.rejected(result),
      };
    };
  } else {
    auth = () => Promise.resolve({ headers: {} });
  }
  return new DirectConnection(kc.cluster.server, source, tls, auth, clientCert, impersonationHeaders(kc.user.name, user));
}

/**
 * client-go's transport refuses a CA together with insecure-skip-tls-verify rather than ignore one of
 * them (kubectl's --insecure-skip-tls-verify drops the CA first, as loadKubeconfig does).
 */
function validateCluster(kc: ResolvedKubeconfig): void {
  const cluster = kc.cluster.fields;
  const hasCa = nonEmpty(cluster['certificate-authority']) !== undefined || nonEmpty(cluster['certificate-authority-data']) !== undefined;
  if (hasCa && cluster['insecure-skip-tls-verify'] === true) {
    throw new KubeconfigError(`${kc.source}: cluster "${kc.cluster.name}": specifying a root certificates file with the insecure flag is not allowed (set either certificate-authority or insecure-skip-tls-verify)`);
  }
}

/**
 * clientcmd's validateAuthInfo, which kubectl applies before using a user: a bearer token and basic
 * auth together are ambiguous; an exec plugin needs a valid interactiveMode (from v1 on, where
 * SetDefaults_ExecConfig gives no default). The plugin checks its command and apiVersion itself.
 */
function validateUser(name: string, user: Fields): void {
  const methods = [...(nonEmpty(user.token) !== undefined ? ['token'] : []), ...(nonEmpty(user.username) !== undefined || nonEmpty(user.password) !== undefined ? ['basicAuth'] : [])];
  if (methods.length > 1) throw new KubeconfigError(`more than one authentication method found for ${name}; found [${methods.join(' ')}], only one is allowed`);
  const execProblem = isFields(user.exec) ? interactiveModeProblem(name, user.exec) : undefined;
  if (execProblem) throw new KubeconfigError(execProblem);
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function bytes(data: unknown, file: unknown): Buffer | undefined {
  if (typeof data === 'string' && data !== '') return Buffer.from(data, 'base64');
  if (typeof file === 'string' && file !== '') return readFileSync(file);
  return undefined;
}
