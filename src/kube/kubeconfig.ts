// Reads kubeconfig files the way kubectl (client-go's clientcmd) does, so the operator and
// `kubectl secondcron` talk to the cluster that `kubectl config current-context` shows:
// - --kubeconfig names one file, read alone; else $KUBECONFIG lists files (missing ones and repeats
//   skipped), else ~/.kube/config;
// - across files the first file to define a cluster, user or context name wins and later
//   definitions of that name are ignored; current-context comes from the first file that sets it;
// - within one file a name defined twice is an error (clientcmd refuses such a file too);
// - relative file references are resolved against the file that holds them.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';

import { YAMLException, load as parseYaml } from 'js-yaml';

export type Fields = Record<string, unknown>;

export interface NamedEntry {
  name: string;
  fields: Fields;
}

export interface KubeconfigSelection {
  /** One file, read alone (the --kubeconfig flag). */
  kubeconfig?: string;
  /** A context other than current-context (the --context flag). */
  context?: string;
  /** kubectl's --cluster and --user: another entry than the context names. */
  cluster?: string;
  user?: string;
  /** kubectl's --server, --token, --insecure-skip-tls-verify: override the chosen entries. */
  server?: string;
  token?: string;
  insecureSkipTlsVerify?: boolean;
  env?: NodeJS.ProcessEnv;
}

export interface ResolvedKubeconfig {
  /** Where this came from, for logs and errors: the file, or the $KUBECONFIG list. */
  source: string;
  contextName: string;
  /** The context's namespace, else "default". */
  namespace: string;
  cluster: NamedEntry & { server: string };
  /** The context's user; fields are empty for a context without one. */
  user: NamedEntry;
  /** Every entry after the merge (file references absolute), for a library that wants the whole config. */
  merged: MergedKubeconfig;
}

export interface MergedKubeconfig {
  currentContext: string | undefined;
  clusters: NamedEntry[];
  users: NamedEntry[];
  contexts: NamedEntry[];
}

export class KubeconfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KubeconfigError';
  }
}

/** The files to read, in precedence order. */
function kubeconfigPaths(selection: KubeconfigSelection): string[] {
  if (selection.kubeconfig) return [selection.kubeconfig];
  const env = selection.env ?? process.env;
  const listed = (env.KUBECONFIG ?? '').split(delimiter).filter((p) => p !== '');
  if (listed.length === 0) return [join(env.HOME ?? homedir(), '.kube', 'config')];
  return [...new Set(listed.map((p) => resolve(p)))];
}

export function loadKubeconfig(selection: KubeconfigSelection = {}): ResolvedKubeconfig {
  const paths = kubeconfigPaths(selection);
  const source = selection.kubeconfig || paths.length === 1 ? `kubeconfig ${paths[0]}` : `$KUBECONFIG (${paths.join(delimiter)})`;
  const present = paths.filter((p) => existsSync(p));
  // kubectl --server works without any kubeconfig file.
  if (present.length === 0 && !selection.server) {
    throw new KubeconfigError(`${source}: ${paths.length === 1 ? 'file not found' : 'none of these files exists'} (and not running in a cluster)`);
  }
  const merged = mergeKubeconfigs(present.map((path) => readKubeconfigFile(path)));

  const contextName = selection.context || merged.currentContext;
  if (!contextName && !selection.server) throw new KubeconfigError(`${source}: no current-context set (choose one with --context)`);
  const context = contextName ? find(merged.contexts, contextName) : { name: '', fields: {} };
  if (!context) throw new KubeconfigError(`${source}: context "${contextName ?? ''}" not found`);
  const clusterName = selection.cluster ?? stringField(context.fields, 'cluster');
  let cluster = clusterName === undefined ? undefined : find(merged.clusters, clusterName);
  if (!cluster && selection.server && !selection.cluster) cluster = { name: '', fields: {} };
  if (!cluster) throw new KubeconfigError(`${source}: ${selection.cluster ? '--cluster' : `context "${contextName ?? ''}" names cluster`} "${clusterName ?? ''}", which is not defined`);
  cluster = withClusterOverrides(cluster, selection);
  const server = stringField(cluster.fields, 'server');
  if (!server) throw new KubeconfigError(`${source}: cluster "${cluster.name}" has no server`);
  const userName = selection.user ?? stringField(context.fields, 'user') ?? '';
  const user = userName === '' ? { name: '', fields: {} } : find(merged.users, userName);
  if (!user) throw new KubeconfigError(`${source}: ${selection.user ? '--user' : `context "${contextName ?? ''}" names user`} "${userName}", which is not defined`);
  return {
    source,
    contextName: contextName ?? '',
    namespace: stringField(context.fields, 'namespace') || 'default',
    cluster: { ...cluster, server },
    user: selection.token ? { name: user.name, fields: { ...clientCertFields(user.fields), token: selection.token } } : user,
    merged,
  };
}

/** --server replaces the server; --insecure-skip-tls-verify drops the CA as clientcmd does (both together are refused by TLS). */
function withClusterOverrides(cluster: NamedEntry, selection: KubeconfigSelection): NamedEntry {
  const fields = { ...cluster.fields };
  if (selection.server) fields.server = selection.server;
  if (selection.insecureSkipTlsVerify) {
    fields['insecure-skip-tls-verify'] = true;
    delete fields['certificate-authority'];
    delete fields['certificate-authority-data'];
  }
  return { name: cluster.name, fields };
}

/** With --token, the user's other ways to authenticate give way; a client certificate stays (TLS, not a header). */
function clientCertFields(fields: Fields): Fields {
  const keep = ['client-certificate', 'client-certificate-data', 'client-key', 'client-key-data'];
  return Object.fromEntries(Object.entries(fields).filter(([k]) => keep.includes(k)));
}

interface ParsedFile extends MergedKubeconfig {
  path: string;
}

/** First definition of each name wins; current-context from the first file that sets one. */
export function mergeKubeconfigs(files: readonly ParsedFile[]): MergedKubeconfig {
  const merged: MergedKubeconfig = { currentContext: undefined, clusters: [], users: [], contexts: [] };
  const add = (into: NamedEntry[], entries: NamedEntry[]): void => {
    for (const entry of entries) if (!find(into, entry.name)) into.push(entry);
  };
  for (const file of files) {
    merged.currentContext ??= file.currentContext;
    add(merged.clusters, file.clusters);
    add(merged.users, file.users);
    add(merged.contexts, file.contexts);
  }
  return merged;
}

/** File references in a cluster or user entry (clientcmd's ResolvePaths list). */
const CLUSTER_PATH_FIELDS = ['certificate-authority'];
const USER_PATH_FIELDS = ['client-certificate', 'client-key', 'tokenFile'];

export function readKubeconfigFile(path: string): ParsedFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new KubeconfigError(`kubeconfig ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    // The reason and position only: js-yaml's message quotes the lines around the error, which in a
    // kubeconfig are tokens, passwords and keys.
    throw new KubeconfigError(`kubeconfig ${path}: not valid YAML: ${yamlProblem(err)}`);
  }
  if (doc === null || doc === undefined) return { path, currentContext: undefined, clusters: [], users: [], contexts: [] };
  if (!isFields(doc)) throw new KubeconfigError(`kubeconfig ${path}: not a kubeconfig (expected a mapping)`);
  const base = dirname(resolve(path));
  const absolute = (fields: Fields, keys: readonly string[]): Fields => {
    const out = { ...fields };
    for (const key of keys) {
      const value = out[key];
      if (typeof value === 'string' && value !== '' && !isAbsolute(value)) out[key] = join(base, value);
    }
    // An exec plugin's command is resolved only when it is a path, not a name looked up on PATH.
    const exec = out.exec;
    if (isFields(exec) && typeof exec.command === 'string' && exec.command.includes('/') && !isAbsolute(exec.command)) {
      out.exec = { ...exec, command: join(base, exec.command) };
    }
    return out;
  };
  const current = doc['current-context'];
  return {
    path,
    currentContext: typeof current === 'string' && current !== '' ? current : undefined,
    clusters: entries(path, doc, 'clusters', 'cluster').map((e) => ({ name: e.name, fields: absolute(e.fields, CLUSTER_PATH_FIELDS) })),
    users: entries(path, doc, 'users', 'user').map((e) => ({ name: e.name, fields: absolute(e.fields, USER_PATH_FIELDS) })),
    contexts: entries(path, doc, 'contexts', 'context'),
  };
}

function yamlProblem(err: unknown): string {
  if (!(err instanceof YAMLException)) return err instanceof Error ? err.name : 'unknown error';
  return err.mark ? `${err.reason} at line ${err.mark.line + 1}, column ${err.mark.column + 1}` : err.reason;
}

function entries(path: string, doc: Fields, list: string, inner: string): NamedEntry[] {
  const raw = doc[list];
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new KubeconfigError(`kubeconfig ${path}: "${list}" must be a list`);
  const out: NamedEntry[] = [];
  for (const item of raw) {
    if (!isFields(item) || typeof item.name !== 'string' || item.name === '') {
      throw new KubeconfigError(`kubeconfig ${path}: every entry of "${list}" needs a name`);
    }
    if (find(out, item.name)) throw new KubeconfigError(`kubeconfig ${path}: "${list}" defines "${item.name}" twice`);
    const fields = item[inner];
    out.push({ name: item.name, fields: isFields(fields) ? fields : {} });
  }
  return out;
}

function find(list: readonly NamedEntry[], name: string): NamedEntry | undefined {
  return list.find((e) => e.name === name);
}

function stringField(fields: Fields, key: string): string | undefined {
  const value = fields[key];
  return typeof value === 'string' ? value : undefined;
}

export function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
