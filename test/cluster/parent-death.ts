// Children that die with their parent, even when the parent is SIGKILLed and no JavaScript exit
// handler runs. util-linux's setpriv (Debian: essential package) sets PR_SET_PDEATHSIG and then
// exec's the real program, so the pid, exit code and signals are the program's own. Where setpriv
// is missing the command runs unwrapped and only the exit/signal handlers protect against strays.
import { accessSync, constants } from 'node:fs';

const SETPRIV = '/usr/bin/setpriv';

const hasSetpriv = ((): boolean => {
  try {
    accessSync(SETPRIV, constants.X_OK);
    return true;
  } catch {
    return false;
  }
})();

/** [command, args] to pass to spawn() so the child gets `signal` when this process dies. */
export function diesWithParent(command: string, args: string[], signal: NodeJS.Signals = 'SIGKILL'): [string, string[]] {
  return hasSetpriv ? [SETPRIV, ['--pdeathsig', signal, '--', command, ...args]] : [command, args];
}
