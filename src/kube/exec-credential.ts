// A kubeconfig user whose credentials come from an exec plugin (client.authentication.k8s.io), run the
// way client-go runs it: the result is cached until its expirationTimestamp (or, without one, until
// the server answers 401); concurrent requests share one run; a plugin that hangs is killed, and a
// request never waits for it beyond its own timeout. Client certificates the plugin returns replace
// the previous ones (see DispatcherPool).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

import { untilAborted } from './abortable.js';
import { CredentialsUnavailable } from './api-error.js';
import { type Fields, isFields } from './kubeconfig.js';
import type { ClientCert } from './tls-dispatcher.js';

export interface ExecResult {
  token?: string;
  clientCert?: ClientCert;
  /** Epoch ms; undefined: valid until the server rejects it. */
  expiresAtMs?: number;
}

export interface ExecPluginOptions {
  /** The user's `exec` stanza from the kubeconfig (command already resolved against its file). */
  exec: Fields;
  /** The cluster stanza, passed to the plugin when it asks for it (provideClusterInfo). */
  cluster: Fields;
  /** Where the user's name came from, for errors. */
  user: string;
  env?: NodeJS.ProcessEnv;
  now?: () => number;
  /** Kill a plugin run after this long (default 60 s). */
  timeoutMs?: number;
  /** The plugin's stderr (client-go passes it through). */
  stderr?: (text: string) => void;
  /** Whether our standard input is a terminal (default: process.stdin.isTTY). */
  stdinIsTerminal?: () => boolean;
}

const API_VERSIONS = new Set(['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1']);
const INTERACTIVE_MODES = new Set(['Never', 'IfAvailable', 'Always']);
/** The cluster extension handed to the plugin as spec.cluster.config (clientcmd's clusterExtensionKey). */
const EXEC_EXTENSION = 'client.authentication.k8s.io/exec';

/** clientcmd's SetDefaults_ExecConfig: v1beta1 defaults interactiveMode to IfAvailable, v1 has no default. */
function interactiveMode(exec: Fields): unknown {
  return exec.interactiveMode ?? (exec.apiVersion === 'client.authentication.k8s.io/v1beta1' ? 'IfAvailable' : undefined);
}

/** The interactiveMode part of clientcmd's validateAuthInfo: what is wrong, if anything. */
export function interactiveModeProblem(user: string, exec: Fields): string | undefined {
  const mode = interactiveMode(exec);
  if (mode === undefined || mode === '') return `interactiveMode must be specified for ${user} to use exec authentication plugin`;
  if (typeof mode !== 'string' || !INTERACTIVE_MODES.has(mode)) return `invalid interactiveMode for ${user}: ${JSON.stringify(mode)}`;
  return undefined;
}

export class ExecCredentialPlugin {
  private cached: ExecResult | undefined;
  private running: Promise<ExecResult> | undefined;
  private readonly command: string;
  private readonly mode: string;
  private readonly args: string[];
  private readonly apiVersion: string;
  private readonly now: () => number;

  constructor(private readonly opts: ExecPluginOptions) {
    const { exec } = opts;
    if (typeof exec.command !== 'string' || exec.command === '') throw new Error(`user "${opts.user}": exec has no command`);
    if (typeof exec.apiVersion !== 'string' || !API_VERSIONS.has(exec.apiVersion)) {
      throw new Error(`user "${opts.user}": exec apiVersion must be one of ${[...API_VERSIONS].join(', ')}, got ${JSON.stringify(exec.apiVersion)}`);
    }
    this.command = exec.command;
    const mode = interactiveMode(exec);
    this.mode = typeof mode === 'string' ? mode : 'Never';
    this.args = Array.isArray(exec.args) ? exec.args.map(String) : [];
    this.apiVersion = exec.apiVersion;
    this.now = opts.now ?? Date.now;
  }

  /** The cached credential while it is valid, else one shared run of the plugin. */
  current(signal?: AbortSignal): Promise<ExecResult> {
    const cached = this.cached;
    if (cached && (cached.expiresAtMs === undefined || this.now() < cached.expiresAtMs)) return Promise.resolve(cached);
    this.running ??= this.run().finally(() => (this.running = undefined));
    return untilAborted(this.running, signal);
  }

  /** The server rejected this credential: the next call runs the plugin again. */
  rejected(result: ExecResult): void {
    if (result === this.cached) this.cached = undefined;
  }

  private async run(): Promise<ExecResult> {
    const output = await this.spawnPlugin();
    const result = this.parse(output);
    this.cached = result;
    return result;
  }

  private spawnPlugin(): Promise<string> {
    const { exec, cluster } = this.opts;
    const extraEnv: Record<string, string> = {};
    for (const entry of Array.isArray(exec.env) ? exec.env : []) {
      if (isFields(entry) && typeof entry.name === 'string') extraEnv[entry.name] = String(entry.value ?? '');
    }
    // client-go's isInteractive: Never; IfAvailable when stdin is a terminal; Always or fail.
    const terminal = (this.opts.stdinIsTerminal ?? (() => process.stdin.isTTY === true))();
    if (this.mode === 'Always' && !terminal) {
      return Promise.reject(new CredentialsUnavailable(`exec plugin ${this.command} for user "${this.opts.user}": exec plugin cannot support interactive mode: standard input is not a terminal`));
    }
    const interactive = this.mode === 'Always' || (this.mode === 'IfAvailable' && terminal);
    const spec: Fields = { interactive };
    if (exec.provideClusterInfo === true) spec.cluster = clusterInfo(cluster);
    extraEnv.KUBERNETES_EXEC_INFO = JSON.stringify({ apiVersion: this.apiVersion, kind: 'ExecCredential', spec });
    const timeoutMs = this.opts.timeoutMs ?? 60_000;
    return new Promise((resolve, reject) => {
      // Its own process group, so a timeout kills what the plugin started too (a shell's children
      // would otherwise hold its output open).
      const child = spawn(this.command, this.args, { env: { ...(this.opts.env ?? process.env), ...extraEnv }, stdio: [interactive ? 'inherit' : 'ignore', 'pipe', 'pipe'], detached: true });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        this.opts.stderr?.(chunk.toString());
      });
      const timer = setTimeout(() => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
        fail(`no answer within ${timeoutMs} ms; killed`);
      }, timeoutMs);
      const fail = (why: string): void => {
        const hint = typeof exec.installHint === 'string' ? `\n${exec.installHint}` : '';
        reject(new CredentialsUnavailable(`exec plugin ${this.command} for user "${this.opts.user}": ${why}${hint}`));
      };
      child.once('error', (err) => {
        clearTimeout(timer);
        fail(err.message);
      });
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        if (code !== 0) fail(`exited with ${signal ? `signal ${signal}` : `code ${String(code)}`}${stderr ? `: ${stderr.trim().slice(0, 300)}` : ''}`);
        else resolve(stdout);
      });
    });
  }

  private parse(output: string): ExecResult {
    const fail = (why: string): never => {
      throw new CredentialsUnavailable(`exec plugin ${this.command} for user "${this.opts.user}": ${why}`);
    };
    let doc: unknown;
    try {
      doc = JSON.parse(output);
    } catch {
      return fail('output is not JSON');
    }
    if (!isFields(doc) || doc.kind !== 'ExecCredential') return fail('output is not an ExecCredential');
    if (doc.apiVersion !== this.apiVersion) return fail(`output apiVersion ${JSON.stringify(doc.apiVersion)} differs from the configured ${this.apiVersion}`);
    const status = doc.status;
    if (!isFields(status)) return fail('output has no status');
    const result: ExecResult = {};
    if (typeof status.token === 'string' && status.token !== '') result.token = status.token;
    const certData = status.clientCertificateData;
    const keyData = status.clientKeyData;
    if (typeof certData === 'string' && typeof keyData === 'string' && certData !== '' && keyData !== '') {
      result.clientCert = { cert: Buffer.from(certData), key: Buffer.from(keyData) };
    } else if (certData || keyData) {
      return fail('status has clientCertificateData or clientKeyData without the other');
    }
    if (!result.token && !result.clientCert) return fail('status has neither a token nor a client certificate');
    if (typeof status.expirationTimestamp === 'string') {
      const at = Date.parse(status.expirationTimestamp);
      if (Number.isNaN(at)) return fail(`invalid expirationTimestamp ${JSON.stringify(status.expirationTimestamp)}`);
      result.expiresAtMs = at;
    }
    return result;
  }
}

/**
 * ExecCredential spec.cluster, as client-go's rest.ConfigToExecCluster builds it from the cluster
 * entry: the server, the CA (data, else the file's content), TLS server name, insecure flag,
 * proxy URL, disable-compression, and the cluster's `client.authentication.k8s.io/exec` extension as
 * `config`. Byte fields travel base64-encoded, as Go's JSON encodes []byte.
 */
export function clusterInfo(cluster: Fields): Fields {
  const info: Fields = { server: cluster.server };
  if (typeof cluster['tls-server-name'] === 'string' && cluster['tls-server-name'] !== '') info['tls-server-name'] = cluster['tls-server-name'];
  if (cluster['insecure-skip-tls-verify'] === true) info['insecure-skip-tls-verify'] = true;
  const caData = cluster['certificate-authority-data'];
  const caFile = cluster['certificate-authority'];
  if (typeof caData === 'string' && caData !== '') info['certificate-authority-data'] = caData;
  else if (typeof caFile === 'string' && caFile !== '') info['certificate-authority-data'] = readFileSync(caFile).toString('base64');
  if (typeof cluster['proxy-url'] === 'string' && cluster['proxy-url'] !== '') info['proxy-url'] = cluster['proxy-url'];
  if (cluster['disable-compression'] === true) info['disable-compression'] = true;
  const extensions = Array.isArray(cluster.extensions) ? cluster.extensions : [];
  const config = extensions.find((e): e is Fields => isFields(e) && e.name === EXEC_EXTENSION)?.extension;
  if (config !== undefined) info.config = config;
  return info;
}
