// `kubectl secondcron`: parses the command line, runs one subcommand, and turns failures into
// kubectl-style "error: …" lines with exit code 1 (a wrong command line too, as kubectl exits, with a
// pointer to the command's --help).
import { type BuildInfo, versionLine } from '../build-info.js';
import { type Invocation, UsageError, parseInvocation } from './args.js';
import { fromCronJobCommand } from './commands/from-cronjob.js';
import { historyCommand } from './commands/history.js';
import { nextCommand } from './commands/next.js';
import { runCommand } from './commands/run.js';
import { setSuspended } from './commands/suspend.js';
import { validateCommand } from './commands/validate.js';
import type { PluginContext } from './context.js';
import { PluginError } from './errors.js';
import { type Target, connect } from './target.js';

export interface PluginIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readStdin(): string;
  nowMs(): number;
  random(): number;
}

/** Runs one invocation; resolves to the exit code. */
export async function runPlugin(argv: readonly string[], io: PluginIo, build: BuildInfo): Promise<number> {
  let invocation: Invocation;
  try {
    invocation = parseInvocation(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr(`error: ${err.message}\nSee 'kubectl secondcron${err.command ? ` ${err.command}` : ''} --help' for usage.\n`);
    return 1;
  }
  let target: Promise<Target> | undefined;
  const ctx: PluginContext = {
    out: (text) => io.stdout(`${text}\n`),
    raw: (text) => io.stdout(text),
    warn: (text) => io.stderr(`Warning: ${text}\n`),
    nowMs: io.nowMs,
    random: io.random,
    readStdin: io.readStdin,
    target: () => (target ??= connect(invocation.connection, `kubectl-secondcron/${build.version} (${build.commit})`)),
  };
  try {
    const { command } = invocation;
    switch (command.name) {
      case 'help':
        ctx.out(command.text);
        return 0;
      case 'version':
        ctx.out(versionLine('kubectl-secondcron', build));
        return 0;
      case 'next':
        await nextCommand(command, ctx);
        return 0;
      case 'validate':
        await validateCommand(command, ctx);
        return 0;
      case 'run':
        await runCommand(command, ctx);
        return 0;
      case 'suspend':
      case 'resume':
        await setSuspended(command, command.name === 'suspend', ctx);
        return 0;
      case 'history':
        await historyCommand(command, ctx);
        return 0;
      case 'from-cronjob':
        await fromCronJobCommand(command, ctx);
        return 0;
    }
  } catch (err) {
    if (!(err instanceof PluginError)) throw err;
    io.stderr(`error: ${err.message}\n`);
    return err.exitCode;
  }
}
