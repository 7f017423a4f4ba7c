// The command line of `kubectl secondcron`: subcommand, its operands, and kubectl's connection flags.
// node:util parseArgs does the tokenizing; this module knows which flag belongs to which subcommand.
import { parseArgs } from 'node:util';

export type OutputFormat = 'table' | 'json' | 'yaml';

/** How to find the cluster, exactly kubectl's flags. */
export interface ConnectionFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

export type Command =
  | { name: 'help'; text: string }
  | { name: 'version' }
  | { name: 'next'; resource?: string; files: string[]; count: number; output: OutputFormat }
  | { name: 'validate'; files: string[] }
  | { name: 'run' | 'suspend' | 'resume'; resource: string }
  | { name: 'history'; resource: string; output: OutputFormat }
  | { name: 'from-cronjob'; resource: string; apply: boolean; suspendSource: boolean };

export interface Invocation {
  command: Command;
  connection: ConnectionFlags;
}

export class UsageError extends Error {}

export const USAGE = `kubectl secondcron: SecondCronJobs from the command line.

Usage:
  kubectl secondcron next NAME | -f FILE [--count N] [-o json|yaml]
                                       the next N fire times (default 5) in the schedule's zone and UTC
  kubectl secondcron validate -f FILE...   the operator's verdict plus server-side dry runs; exit 1 on any error
  kubectl secondcron run NAME          start a Job now from the template (like kubectl create job --from)
  kubectl secondcron suspend NAME      stop starting new Jobs (running ones continue)
  kubectl secondcron resume NAME       start scheduling again
  kubectl secondcron history NAME [-o json|yaml]
                                       owned Jobs, newest first: slot, created, trigger latency, outcome, duration
  kubectl secondcron from-cronjob NAME [--apply] [--suspend-source]
                                       the SecondCronJob equivalent of a CronJob, printed as YAML or applied

Flags (as kubectl's):
  --kubeconfig FILE   -n, --namespace NS   --context NAME   -o, --output json|yaml
  -f, --filename FILE (repeatable; "-" reads stdin)   -h, --help   --version`;

const SUBCOMMANDS = ['next', 'validate', 'run', 'suspend', 'resume', 'history', 'from-cronjob'] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

/** Flags only some subcommands take (the connection flags and --help are everyone's). */
const ALLOWED: Record<Subcommand, readonly string[]> = {
  next: ['filename', 'count', 'output'],
  validate: ['filename'],
  run: [],
  suspend: [],
  resume: [],
  history: ['output'],
  'from-cronjob': ['apply', 'suspend-source'],
};

const OPTIONS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  output: { type: 'string', short: 'o' },
  filename: { type: 'string', short: 'f', multiple: true },
  count: { type: 'string' },
  apply: { type: 'boolean' },
  'suspend-source': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

export function parseInvocation(argv: readonly string[]): Invocation {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const { values, positionals } = parsed;
  const connection: ConnectionFlags = {};
  if (values.kubeconfig !== undefined) connection.kubeconfig = values.kubeconfig;
  if (values.context !== undefined) connection.context = values.context;
  if (values.namespace !== undefined) connection.namespace = values.namespace;
  if (values.version) return { command: { name: 'version' }, connection };
  const [sub, ...operands] = positionals;
  if (values.help || sub === undefined || sub === 'help') return { command: { name: 'help', text: USAGE }, connection };
  if (!isSubcommand(sub)) throw new UsageError(`unknown command "${sub}" (one of ${SUBCOMMANDS.join(', ')})`);

  for (const flag of ['filename', 'count', 'output', 'apply', 'suspend-source'] as const) {
    if (values[flag] !== undefined && !ALLOWED[sub].includes(flag)) throw new UsageError(`--${flag} does not apply to "${sub}"`);
  }
  const files = values.filename ?? [];
  const output = outputFormat(values.output);
  const one = (): string => {
    if (operands.length !== 1) throw new UsageError(`"${sub}" needs exactly one SecondCronJob NAME, got ${operands.length === 0 ? 'none' : operands.join(' ')}`);
    return operands[0] as string;
  };
  const command = ((): Command => {
    switch (sub) {
      case 'next': {
        const count = values.count === undefined ? 5 : Number(values.count);
        if (!Number.isInteger(count) || count < 1 || count > 1000) throw new UsageError(`--count must be a whole number from 1 to 1000, got "${values.count}"`);
        if ((operands.length === 0) === (files.length === 0) || operands.length > 1) throw new UsageError('"next" needs either one NAME or -f FILE');
        return { name: 'next', files, count, output, ...(operands[0] !== undefined ? { resource: operands[0] } : {}) };
      }
      case 'validate':
        if (files.length === 0) throw new UsageError('"validate" needs -f FILE (repeatable)');
        if (operands.length > 0) throw new UsageError(`"validate" takes files with -f, not ${operands.join(' ')}`);
        return { name: 'validate', files };
      case 'history':
        return { name: 'history', resource: one(), output };
      case 'from-cronjob':
        return { name: 'from-cronjob', resource: one(), apply: values.apply ?? false, suspendSource: values['suspend-source'] ?? false };
      default:
        return { name: sub, resource: one() };
    }
  })();
  if (command.name === 'from-cronjob' && command.suspendSource && !command.apply) throw new UsageError('--suspend-source needs --apply');
  return { command, connection };
}

function isSubcommand(s: string): s is Subcommand {
  return (SUBCOMMANDS as readonly string[]).includes(s);
}

function outputFormat(value: string | undefined): OutputFormat {
  if (value === undefined) return 'table';
  if (value === 'json' || value === 'yaml') return value;
  throw new UsageError(`--output must be json or yaml, got "${value}"`);
}
