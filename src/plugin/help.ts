// `kubectl secondcron --help` and `kubectl secondcron COMMAND --help`, laid out like kubectl's own
// help: what it does, Examples, Options, Usage.
export const SUBCOMMANDS = ['next', 'validate', 'run', 'suspend', 'resume', 'history', 'from-cronjob'] as const;
export type Subcommand = (typeof SUBCOMMANDS)[number];

const GLOBAL_FLAGS = `Global flags (as kubectl's):
    --kubeconfig FILE, --context NAME, --cluster NAME, --user NAME, -n, --namespace NS,
    -s, --server URL, --token TOKEN, --insecure-skip-tls-verify, --request-timeout DURATION (0: none),
    --as USER, --as-group GROUP (repeatable), --as-uid UID`;

export const USAGE = `kubectl secondcron: SecondCronJobs from the command line.

Commands:
  next          The next fire times of SecondCronJobs, in their zone and UTC
  validate      The operator's verdict plus server-side dry runs of files; exit 1 on any error
  run           Start a Job now from a SecondCronJob's template (like kubectl create job --from)
  suspend       Stop starting new Jobs (running ones continue)
  resume        Start scheduling again
  history       The Jobs of SecondCronJobs, newest first: slot, created, trigger latency, outcome
  from-cronjob  The SecondCronJob equivalent of a CronJob, printed or applied

NAME may also be written TYPE/NAME (scj/heartbeat), as kubectl takes it.

${GLOBAL_FLAGS}
    -h, --help, --version

Use "kubectl secondcron COMMAND --help" for more about a command.`;

function page(what: string, examples: string, options: string, usage: string): string {
  return `${what}

Examples:
${examples.replace(/^/gm, '  ')}

Options:
${options}

Usage:
  ${usage}

${GLOBAL_FLAGS}`;
}

export const COMMAND_HELP: Record<Subcommand, string> = {
  next: page(
    `The next fire times of SecondCronJobs, computed with the operator's own slot math, in each schedule's
time zone and in UTC. Without NAME: every SecondCronJob of the namespace (-A: of every namespace).
-f FILE needs no cluster.`,
    `# The next 3 slots of one SecondCronJob
kubectl secondcron next heartbeat --count 3

# Of every SecondCronJob in every namespace, one line each
kubectl secondcron next -A --count 1 -o wide

# From a file, before applying it (no cluster needed)
kubectl secondcron next -f heartbeat.yaml

# Only the UTC times
kubectl secondcron next scj/heartbeat -o jsonpath='{range [*].next[*]}{.utc}{"\\n"}{end}'`,
    `    -A, --all-namespaces   every namespace
    --count N              how many slots (1-1000, default 5)
    -f, --filename FILE    read SecondCronJobs from FILE ("-": stdin; repeatable)
    -o, --output FORMAT    wide|json|yaml|name|jsonpath=TEMPLATE`,
    'kubectl secondcron next [NAME...] [-A] | -f FILE [--count N] [-o FORMAT]',
  ),
  validate: page(
    `What the operator would say about each SecondCronJob in the files (its schedule and time-zone
checks, and a server-side dry run of the Job its template makes) plus a server-side dry run of
the resource itself (the CRD schema and CEL rules, strict field validation). Exit 1 if any is
invalid. --local: only the operator's own checks, no cluster needed.`,
    `# Before a merge, in CI (one -f per file)
kubectl secondcron validate -f examples/cron-berlin.yaml -f examples/interval-heartbeat.yaml

# Without a cluster (schedule, time zone and the checks the operator makes itself)
kubectl secondcron validate --local -f heartbeat.yaml`,
    `    -f, --filename FILE    files to check ("-": stdin; repeatable)
    --local                no cluster: the operator's own checks only`,
    'kubectl secondcron validate [--local] -f FILE...',
  ),
  run: page(
    `Start a Job now from a SecondCronJob's template, like kubectl create job --from=cronjob/NAME.
The operator owns it like its scheduled Jobs (active list, concurrency policy, history limits).
Its name is NAME-manual-<5 characters> unless --job-name says otherwise; a scheduled Job's name
(NAME-<digits>) is refused. --env sets environment variables in every container of the template
(or only in --container), replacing an entry of the same name; the Job's annotation
secondcron.io/env-overrides records them.`,
    `# A Job now
kubectl secondcron run heartbeat

# With a name of your choice
kubectl secondcron run scj/heartbeat --job-name heartbeat-hotfix

# With a changed environment, in the container "main" only
kubectl secondcron run report --env REPORT_DAY=2026-12-01 --env DRY_RUN= --container main

# What would be created, checked by the API server but not stored
kubectl secondcron run heartbeat --dry-run=server -o yaml`,
    `    --job-name NAME        the Job's name
    --env NAME=VALUE       set an environment variable (repeatable; VALUE may be empty)
    -c, --container NAME   only in this container (or init container); default: every container
    --dry-run none|client|server
                           client: print the Job only; server: the API server checks it, stores nothing
    -o, --output FORMAT    json|yaml|name|jsonpath=TEMPLATE`,
    'kubectl secondcron run NAME [--job-name NAME] [--env NAME=VALUE]... [--container NAME] [--dry-run=client|server] [-o FORMAT]',
  ),
  suspend: page(
    'Set spec.suspend: no new Jobs start; running ones continue. Slots that fall while suspended never run.',
    `kubectl secondcron suspend heartbeat
kubectl secondcron suspend scj/heartbeat --dry-run=server`,
    `    --dry-run none|client|server
    -o, --output FORMAT    json|yaml|name|jsonpath=TEMPLATE`,
    'kubectl secondcron suspend NAME [--dry-run=client|server] [-o FORMAT]',
  ),
  resume: page(
    'Clear spec.suspend: scheduling starts again with the next slot.',
    `kubectl secondcron resume heartbeat
kubectl secondcron resume scj/heartbeat -o name`,
    `    --dry-run none|client|server
    -o, --output FORMAT    json|yaml|name|jsonpath=TEMPLATE`,
    'kubectl secondcron resume NAME [--dry-run=client|server] [-o FORMAT]',
  ),
  history: page(
    `The Jobs SecondCronJobs own, newest first: slot, creation, trigger latency (slot to creation),
outcome and duration. Without NAME: every SecondCronJob of the namespace (-A: of every namespace).`,
    `kubectl secondcron history heartbeat
kubectl secondcron history -A -o wide

# The names of the failed Jobs
kubectl secondcron history heartbeat -o jsonpath='{range [?(@.outcome=="Failed")]}{.job}{"\\n"}{end}'`,
    `    -A, --all-namespaces   every namespace
    -o, --output FORMAT    wide|json|yaml|name|jsonpath=TEMPLATE`,
    'kubectl secondcron history [NAME...] [-A] [-o FORMAT]',
  ),
  'from-cronjob': page(
    `The SecondCronJob equivalent of a CronJob (schedule, zone, policies, limits, template), printed as
YAML or applied server-side; a warning where the day-of-month/day-of-week rules of Vixie cron
(ours) and robfig/cron (the CronJob controller's) differ.`,
    `kubectl secondcron from-cronjob nightly > nightly.yaml
kubectl secondcron from-cronjob cronjob/nightly --apply --suspend-source`,
    `    --apply                apply it server-side
    --suspend-source       with --apply: suspend the CronJob
    -o, --output FORMAT    json|yaml|name|jsonpath=TEMPLATE (default yaml)`,
    'kubectl secondcron from-cronjob NAME [--apply [--suspend-source]] [-o FORMAT]',
  ),
};
