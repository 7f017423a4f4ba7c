// The command line of `kubectl secondcron`: subcommand, its operands, and kubectl's global flags.
// node:util parseArgs does the tokenizing; this module knows which flag belongs to which subcommand.
import { parseArgs } from 'node:util';

import { type EnvOverrides, parseEnvAssignment } from './env-overrides.js';
import { COMMAND_HELP, USAGE, type Subcommand, SUBCOMMANDS } from './help.js';

/** -o: kubectl's printers that make sense here. */
export type Output =
  | { format: 'default' | 'wide' | 'json' | 'yaml' | 'name' }
  | { format: 'jsonpath'; template: string };

/** How to find the cluster and whom to be there: kubectl's global flags. */
export interface ConnectionFlags {
  kubeconfig?: string;
  context?: string;
  cluster?: string;
  user?: string;
  namespace?: string;
  server?: string;
  token?: string;
  insecureSkipTlsVerify?: boolean;
  as?: string;
  asGroups?: string[];
  asUid?: string;
  /** --request-timeout; 0 means none. */
  requestTimeoutMs?: number;
}

export type DryRun = 'none' | 'client' | 'server';

/** Where `next` and `history` look when given no NAME: one namespace, or all (-A). */
export type Scope = { names: string[] } | { allNamespaces: boolean };

export type Command =
  | { name: 'help'; text: string }
  | { name: 'version' }
  | { name: 'next'; scope: Scope; files: string[]; count: number; output: Output }
  | { name: 'validate'; files: string[]; local: boolean }
  | { name: 'run'; resource: string; jobName?: string; envOverrides?: EnvOverrides; dryRun: DryRun; output: Output }
  | { name: 'suspend' | 'resume'; resource: string; dryRun: DryRun; output: Output }
  | { name: 'history'; scope: Scope; output: Output }
  | { name: 'from-cronjob'; resource: string; apply: boolean; suspendSource: boolean; output: Output };

export interface Invocation {
  command: Command;
  connection: ConnectionFlags;
}

/** A wrong command line; `command` names the subcommand whose --help the message points to. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
  }
}

/** Flags only some subcommands take (the global flags and --help are everyone's). */
const ALLOWED: Record<Subcommand, readonly string[]> = {
  next: ['filename', 'count', 'output', 'all-namespaces'],
  validate: ['filename', 'local'],
  run: ['job-name', 'env', 'container', 'dry-run', 'output'],
  suspend: ['dry-run', 'output'],
  resume: ['dry-run', 'output'],
  history: ['output', 'all-namespaces'],
  'from-cronjob': ['apply', 'suspend-source', 'output'],
};
const COMMAND_FLAGS = ['filename', 'count', 'output', 'all-namespaces', 'local', 'job-name', 'env', 'container', 'dry-run', 'apply', 'suspend-source'] as const;

/** The output formats each subcommand prints. */
const OUTPUTS: Record<Subcommand, readonly string[]> = {
  next: ['wide', 'json', 'yaml', 'name', 'jsonpath'],
  validate: [],
  run: ['json', 'yaml', 'name', 'jsonpath'],
  suspend: ['json', 'yaml', 'name', 'jsonpath'],
  resume: ['json', 'yaml', 'name', 'jsonpath'],
  history: ['wide', 'json', 'yaml', 'name', 'jsonpath'],
  'from-cronjob': ['json', 'yaml', 'name', 'jsonpath'],
};

const OPTIONS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  cluster: { type: 'string' },
  user: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  server: { type: 'string', short: 's' },
  token: { type: 'string' },
  'insecure-skip-tls-verify': { type: 'boolean' },
  as: { type: 'string' },
  'as-group': { type: 'string', multiple: true },
  'as-uid': { type: 'string' },
  'request-timeout': { type: 'string' },
  'all-namespaces': { type: 'boolean', short: 'A' },
  output: { type: 'string', short: 'o' },
  filename: { type: 'string', short: 'f', multiple: true },
  count: { type: 'string' },
  local: { type: 'boolean' },
  'job-name': { type: 'string' },
  env: { type: 'string', multiple: true },
  container: { type: 'string', short: 'c' },
  'dry-run': { type: 'string' },
  apply: { type: 'boolean' },
  'suspend-source': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

const BOOLEAN_FLAGS = new Set(Object.entries(OPTIONS).filter(([, o]) => o.type === 'boolean').map(([name]) => `--${name}`));

export function parseInvocation(argv: readonly string[]): Invocation {
  const sub = argv.find((a) => !a.startsWith('-') && isSubcommand(a));
  let parsed;
  try {
    parsed = parseArgs({ args: booleansAsKubectlWrites(argv), options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(parseArgsMessage(err), sub);
  }
  const { values, positionals } = parsed;
  const connection = connectionFlags(values, sub);
  if (values.version) return { command: { name: 'version' }, connection };
  const [first, ...operands] = positionals;
  if (first === undefined || first === 'help') {
    const topic = operands[0];
    return { command: { name: 'help', text: topic !== undefined && isSubcommand(topic) ? COMMAND_HELP[topic] : USAGE }, connection };
  }
  if (!isSubcommand(first)) throw new UsageError(`unknown command "${first}" for "kubectl secondcron" (one of ${SUBCOMMANDS.join(', ')})`);
  if (values.help) return { command: { name: 'help', text: COMMAND_HELP[first] }, connection };
  const usage = (message: string): UsageError => new UsageError(message, first);

  for (const flag of COMMAND_FLAGS) {
    if (values[flag] !== undefined && !ALLOWED[first].includes(flag)) throw usage(`unknown flag: --${flag} (not a flag of "${first}")`);
  }
  const files = values.filename ?? [];
  const output = outputOf(values.output, first);
  const allNamespaces = values['all-namespaces'] ?? false;
  const dryRun = dryRunOf(values['dry-run'], first);
  const one = (kinds: ResourceKind): string => {
    if (operands.length !== 1) throw usage(`"${first}" needs exactly one ${kinds.kind} NAME, got ${operands.length === 0 ? 'none' : operands.join(' ')}`);
    return resourceName(operands[0] as string, kinds, first);
  };
  const scope = (): Scope => {
    const names = operands.map((o) => resourceName(o, SCJ, first));
    if (allNamespaces && names.length > 0) throw usage('a resource cannot be retrieved by name across all namespaces (-A with NAME)');
    return names.length > 0 ? { names } : { allNamespaces };
  };
  const command = ((): Command => {
    switch (first) {
      case 'next': {
        const count = values.count === undefined ? 5 : Number(values.count);
        if (!Number.isInteger(count) || count < 1 || count > 1000) throw usage(`--count must be a whole number from 1 to 1000, got "${values.count}"`);
        if (files.length > 0 && (operands.length > 0 || allNamespaces)) throw usage('"next" takes NAMEs (or -A) or -f FILE, not both');
        return { name: 'next', scope: files.length > 0 ? { names: [] } : scope(), files, count, output };
      }
      case 'validate':
        if (files.length === 0) throw usage('"validate" needs -f FILE (repeatable)');
        if (operands.length > 0) throw usage(`"validate" takes files with -f, not ${operands.join(' ')}`);
        return { name: 'validate', files, local: values.local ?? false };
      case 'history':
        return { name: 'history', scope: scope(), output };
      case 'from-cronjob':
        if (values['suspend-source'] && !values.apply) throw usage('--suspend-source needs --apply');
        return { name: 'from-cronjob', resource: one(CRONJOB), apply: values.apply ?? false, suspendSource: values['suspend-source'] ?? false, output };
      case 'run': {
        const resource = one(SCJ);
        const jobName = values['job-name'];
        const envOverrides = envOverridesOf(values.env, values.container, usage);
        const run = { name: 'run' as const, resource, ...(envOverrides ? { envOverrides } : {}), dryRun, output };
        if (jobName === undefined) return run;
        if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(jobName) || jobName.length > 63) {
          throw usage(`--job-name "${jobName}" is not a valid Job name (lower-case letters, digits and "-", at most 63 characters)`);
        }
        // The operator's exactly-once lock is the slot-derived name: a manual Job must never take one.
        if (new RegExp(`^${resource.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-[0-9]+$`).test(jobName)) {
          throw usage(`--job-name "${jobName}" has the form of a scheduled Job's name (${resource}-<slot unix seconds>); choose another`);
        }
        return { ...run, jobName };
      }
      case 'suspend':
      case 'resume':
        return { name: first, resource: one(SCJ), dryRun, output };
    }
  })();
  return { command, connection };
}

/** --env K=V (repeatable) and --container C of `run`; undefined without --env. */
function envOverridesOf(assignments: string[] | undefined, container: string | undefined, usage: (message: string) => UsageError): EnvOverrides | undefined {
  if (assignments === undefined || assignments.length === 0) {
    if (container !== undefined) throw usage('--container says where --env goes: give --env NAME=VALUE too');
    return undefined;
  }
  const env: Array<{ name: string; value: string }> = [];
  for (const text of assignments) {
    const parsed = parseEnvAssignment(text);
    if (!parsed.ok) throw usage(parsed.message);
    if (env.some((e) => e.name === parsed.name)) throw usage(`--env ${parsed.name} is given twice`);
    env.push({ name: parsed.name, value: parsed.value });
  }
  if (container !== undefined && container === '') throw usage('--container needs a container name');
  return { env, ...(container !== undefined ? { container } : {}) };
}

interface ResourceKind {
  kind: string;
  /** Every spelling kubectl accepts before the slash: short name, singular, plural, with the group. */
  types: readonly string[];
}
const SCJ: ResourceKind = {
  kind: 'SecondCronJob',
  types: ['scj', 'secondcronjob', 'secondcronjobs', 'secondcronjob.secondcron.io', 'secondcronjobs.secondcron.io', 'secondcronjob.v1.secondcron.io', 'secondcronjobs.v1.secondcron.io'],
};
const CRONJOB: ResourceKind = {
  kind: 'CronJob',
  types: ['cj', 'cronjob', 'cronjobs', 'cronjob.batch', 'cronjobs.batch', 'cronjob.v1.batch', 'cronjobs.v1.batch'],
};

/** NAME or TYPE/NAME (scj/x, secondcronjob.secondcron.io/x), as kubectl takes them. */
function resourceName(operand: string, kinds: ResourceKind, sub: string): string {
  const slash = operand.indexOf('/');
  if (slash < 0) return operand;
  const type = operand.slice(0, slash);
  const name = operand.slice(slash + 1);
  if (!kinds.types.includes(type.toLowerCase())) throw new UsageError(`"${sub}" takes ${kinds.kind}s (${kinds.types[0]}/NAME), not "${type}"`, sub);
  if (name === '' || name.includes('/')) throw new UsageError(`"${operand}" is not TYPE/NAME`, sub);
  return name;
}

function connectionFlags(values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'], sub: string | undefined): ConnectionFlags {
  const c: ConnectionFlags = {};
  if (values.kubeconfig !== undefined) c.kubeconfig = values.kubeconfig;
  if (values.context !== undefined) c.context = values.context;
  if (values.cluster !== undefined) c.cluster = values.cluster;
  if (values.user !== undefined) c.user = values.user;
  if (values.namespace !== undefined) c.namespace = values.namespace;
  if (values.server !== undefined) c.server = values.server;
  if (values.token !== undefined) c.token = values.token;
  if (values['insecure-skip-tls-verify']) c.insecureSkipTlsVerify = true;
  if (values.as !== undefined) c.as = values.as;
  if (values['as-group'] !== undefined) c.asGroups = values['as-group'];
  if (values['as-uid'] !== undefined) c.asUid = values['as-uid'];
  if ((c.asGroups || c.asUid) && c.as === undefined) throw new UsageError('requesting uid or groups for impersonation requires --as (a username)', sub);
  if (values['request-timeout'] !== undefined) c.requestTimeoutMs = requestTimeout(values['request-timeout'], sub);
  return c;
}

/** kubectl's --request-timeout: a bare number is seconds; else a Go duration (1s, 2m, 1m30s); 0 = none. */
function requestTimeout(value: string, sub: string | undefined): number {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  if (/^[0-9]+$/.test(value)) return Number(value) * 1000;
  const parts = [...value.matchAll(/([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== value) {
    throw new UsageError(`invalid --request-timeout "${value}": a whole number of seconds or a duration such as 1s, 2m, 1m30s (0: none)`, sub);
  }
  return parts.reduce((ms, p) => ms + Number(p[1]) * (units[p[2] as string] as number), 0);
}

function outputOf(value: string | undefined, sub: Subcommand): Output {
  if (value === undefined) return { format: 'default' };
  const allowed = OUTPUTS[sub];
  const jsonpath = /^jsonpath=(.*)$/s.exec(value);
  if (jsonpath && allowed.includes('jsonpath')) {
    if (jsonpath[1] === '') throw new UsageError('template format specified but no template given', sub);
    return { format: 'jsonpath', template: jsonpath[1] as string };
  }
  if (allowed.includes(value) && value !== 'jsonpath') return { format: value as 'wide' | 'json' | 'yaml' | 'name' };
  const list = allowed.map((f) => (f === 'jsonpath' ? 'jsonpath=TEMPLATE' : f)).join(', ');
  throw new UsageError(allowed.length === 0 ? `"${sub}" takes no --output` : `unable to match a printer suitable for the output format "${value}", allowed formats are: ${list}`, sub);
}

function dryRunOf(value: string | undefined, sub: string): DryRun {
  if (value === undefined) return 'none';
  if (value === 'none' || value === 'client' || value === 'server') return value;
  throw new UsageError(`Invalid dry-run value (${value}). Must be "none", "server", or "client".`, sub);
}

/** kubectl takes `--flag=true|false` for boolean flags; parseArgs only the bare flag. */
function booleansAsKubectlWrites(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (const arg of argv) {
    const m = /^(--[a-z-]+)=(true|false)$/.exec(arg);
    if (m && BOOLEAN_FLAGS.has(m[1] as string)) {
      if (m[2] === 'true') out.push(m[1] as string);
    } else out.push(arg);
  }
  return out;
}

/** parseArgs' wording, in kubectl's ("unknown flag: --x", "flag needs an argument: --x"). */
function parseArgsMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const unknown = /^Unknown option '([^']+)'/.exec(message);
  if (unknown) return `unknown flag: ${unknown[1]}`;
  const needs = /^Option '(?:-\w, )?(--[\w-]+) <value>' argument missing/.exec(message);
  if (needs) return `flag needs an argument: ${needs[1]}`;
  return message;
}

function isSubcommand(s: string): s is Subcommand {
  return (SUBCOMMANDS as readonly string[]).includes(s);
}
