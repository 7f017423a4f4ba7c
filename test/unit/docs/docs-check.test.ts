// The docs check `make test` runs (issue 33): what users read must be true.
//   1. No placeholder left in prose: an UPPER_SNAKE word outside code (a real variable name is
//      written as `code`), TODO, TBD, FIXME, XXX.
//   2. Every kubectl plugin command in a code block of the README and docs/, and every example in the
//      plugin's --help pages, runs as written through a shell: globs expanded against the
//      repository (examples/*.yaml), arguments parsed by the plugin, files read. No cluster is
//      reachable here (a kubeconfig names a closed port), so a command that needs one may fail with
//      "cannot reach the API server" and nothing else; a usage error or an unreadable file fails.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { repoRoot } from '../../cluster/repo-root.js';

const ROOT = repoRoot();
const PLUGIN = join(ROOT, 'build', 'src', 'bin', 'kubectl-secondcron.js');
const USER_DOCS = ['README.md', 'helm/secondcron/README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Markdown without fenced code blocks, HTML comments and inline code spans. */
export function prose(markdown: string): string {
  return markdown
    .replace(/^```[\s\S]*?^```/gm, '')
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/`[^`\n]*`/g, '');
}

export function placeholders(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b(?:TODO|TBD|FIXME|XXX)\b/g)].map((m) => m[0]);
}

/** The lines of fenced code blocks. */
function codeLines(markdown: string): string[] {
  return [...markdown.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].flatMap((m) => (m[1] ?? '').split('\n'));
}

/**
 * Words of one shell command line as a POSIX shell splits them (quotes, backslashes, `#` comments),
 * cut at `;`, `|`, `&&` into commands; `> file` redirections dropped. Unquoted words with `*` are
 * marked for glob expansion. A `$(` or a backquote makes the line unsupported (null).
 */
export function shellCommands(line: string): { word: string; glob: boolean }[][] | null {
  if (line.includes('$(') || line.includes('`')) return null;
  const commands: { word: string; glob: boolean }[][] = [[]];
  let word: string | undefined;
  let glob = false;
  let redirect = false;
  const end = (): void => {
    if (word === undefined) return;
    if (redirect) redirect = false;
    else commands.at(-1)?.push({ word, glob });
    word = undefined;
    glob = false;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line.charAt(i);
    if (c === "'") {
      const close = line.indexOf("'", i + 1);
      if (close < 0) return null;
      word = (word ?? '') + line.slice(i + 1, close);
      i = close;
    } else if (c === '"') {
      let j = i + 1;
      let text = '';
      for (; j < line.length && line.charAt(j) !== '"'; j++) {
        if (line.charAt(j) === '\\' && '"\\$`'.includes(line.charAt(j + 1))) j++;
        text += line.charAt(j);
      }
      if (j >= line.length) return null;
      word = (word ?? '') + text;
      i = j;
    } else if (c === '\\') {
      word = (word ?? '') + line.charAt(++i);
    } else if (c === ' ' || c === '\t') {
      end();
    } else if (c === '#' && word === undefined) {
      break;
    } else if (c === ';' || c === '|' || (c === '&' && line.charAt(i + 1) === '&')) {
      end();
      if (c === '&' || (c === '|' && line.charAt(i + 1) === '|')) i++;
      commands.push([]);
    } else if (c === '>') {
      end();
      redirect = true;
    } else {
      if (c === '*' || c === '?') glob = true;
      word = (word ?? '') + c;
    }
  }
  end();
  return commands.filter((c) => c.length > 0);
}

/** A glob in the last path segment, expanded against `cwd` as a shell does (no match: kept as is). */
function expand(word: string, cwd: string): string[] {
  const dir = dirname(word);
  const re = new RegExp(`^${basename(word).replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
  const base = join(cwd, dir);
  const hits = existsSync(base) ? readdirSync(base).filter((f) => !f.startsWith('.') && re.test(f)).sort() : [];
  return hits.length > 0 ? hits.map((f) => (dir === '.' ? f : `${dir}/${f}`)) : [word];
}

/** `kubectl secondcron ARGS…` commands in text, as argument lists (after `kubectl secondcron`). */
export function pluginCommands(lines: string[]): { line: string; words: { word: string; glob: boolean }[] }[] {
  const out: { line: string; words: { word: string; glob: boolean }[] }[] = [];
  for (const raw of lines) {
    const line = raw.trim();
    if (!line.includes('kubectl secondcron ')) continue;
    const commands = shellCommands(line);
    if (commands === null) throw new Error(`a plugin command the docs check cannot read (no $( or backquotes, please): ${line}`);
    for (const words of commands) {
      if (words[0]?.word === 'kubectl' && words[1]?.word === 'secondcron') out.push({ line, words: words.slice(2) });
    }
  }
  return out;
}

describe('docs check', () => {
  let sandbox: string;
  let kubeconfig: string;

  before(() => {
    sandbox = mkdtempSync(join(tmpdir(), 'secondcron-docs-check-'));
    symlinkSync(join(ROOT, 'examples'), join(sandbox, 'examples'));
    kubeconfig = join(sandbox, 'kubeconfig');
    writeFileSync(kubeconfig, JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'closed', cluster: { server: 'https://127.0.0.1:9' } }],
      users: [{ name: 'u', user: { token: 'docs-check' } }],
      contexts: [{ name: 'closed', context: { cluster: 'closed', user: 'u', namespace: 'default' } }],
      'current-context': 'closed',
    }));
  });

  after(() => {
    if (sandbox) rmSync(sandbox, { recursive: true, force: true });
  });

  const plugin = (args: string[]): { code: number | null; stdout: string; stderr: string } => {
    const res = spawnSync(process.execPath, [PLUGIN, ...args], {
      cwd: sandbox,
      env: { PATH: process.env.PATH ?? '', HOME: sandbox, KUBECONFIG: kubeconfig },
      encoding: 'utf8',
      input: '',
      timeout: 30_000,
    });
    return { code: res.status, stdout: res.stdout, stderr: res.stderr };
  };

  test('no placeholder in the prose of the README, the chart README and docs/', () => {
    const found = USER_DOCS.flatMap((f) => placeholders(readFileSync(join(ROOT, f), 'utf8')).map((p) => `${f}: ${p}`));
    assert.deepEqual(found, []);
  });

  test('the placeholder check finds what it should, and not code', () => {
    assert.deepEqual(placeholders('now it is CRD_SIZE, so it works. TODO: more'), ['CRD_SIZE', 'TODO']);
    assert.deepEqual(placeholders('set `NODE_OPTIONS` or\n```sh\nFOO_BAR=1 make\n```\n<!-- LATER_X -->'), []);
  });

  test('the shell reading of a command line: quotes, comments, redirections, several commands', () => {
    const words = (line: string): string[][] | null => shellCommands(line)?.map((c) => c.map((w) => w.word)) ?? null;
    assert.deepEqual(words(`kubectl secondcron next x -o jsonpath='{range [*]}{.utc}{"\\n"}{end}'   # UTC`), [['kubectl', 'secondcron', 'next', 'x', '-o', 'jsonpath={range [*]}{.utc}{"\\n"}{end}']]);
    assert.deepEqual(words('kubectl secondcron suspend a; kubectl secondcron resume a'), [['kubectl', 'secondcron', 'suspend', 'a'], ['kubectl', 'secondcron', 'resume', 'a']]);
    assert.deepEqual(words('kubectl secondcron from-cronjob nightly > nightly.yaml'), [['kubectl', 'secondcron', 'from-cronjob', 'nightly']]);
    assert.deepEqual(shellCommands('kubectl secondcron validate -f examples/*.yaml')?.[0]?.at(-1), { word: 'examples/*.yaml', glob: true });
    assert.deepEqual(expand('examples/*.yaml', ROOT).length > 1, true, 'the glob matches the examples');
  });

  /** Runs each command; returns the failures. */
  const check = (commands: { line: string; words: { word: string; glob: boolean }[] }[]): string[] => {
    const failures: string[] = [];
    for (const { line, words } of commands) {
      const args = words.flatMap((w) => (w.glob ? expand(w.word, sandbox) : [w.word]));
      // A file the example names but the repository does not have (heartbeat.yaml, NAME.yaml): a
      // valid SecondCronJob under that name, so the command is checked, not the reader's file.
      args.forEach((a, i) => {
        const file = args[i + 1];
        if ((a === '-f' || a === '--filename') && file && file !== '-' && !existsSync(join(sandbox, file)) && !file.includes('/')) {
          copyFileSync(join(ROOT, 'examples', 'interval-heartbeat.yaml'), join(sandbox, file));
        }
      });
      const res = plugin(args);
      const ok = res.code === 0 || (res.code === 1 && /^error: cannot reach the API server at https:\/\/127\.0\.0\.1:9\b/.test(res.stderr));
      if (!ok) failures.push(`${line}\n    kubectl secondcron ${args.join(' ')} → exit ${res.code}: ${res.stderr.trim()}`);
    }
    return failures;
  };

  test('every plugin command in the code blocks of the README and docs/ runs as written', () => {
    const commands = USER_DOCS.flatMap((f) => pluginCommands(codeLines(readFileSync(join(ROOT, f), 'utf8'))));
    assert.ok(commands.length >= 8, `found only ${commands.length} plugin commands in the docs`);
    assert.deepEqual(check(commands), []);
  });

  test("every example in the plugin's --help pages runs as written", () => {
    const top = plugin(['--help']);
    assert.equal(top.code, 0, top.stderr);
    const names = [...top.stdout.matchAll(/^ {2}([a-z][a-z-]+) {2,}/gm)].map((m) => m[1] ?? '');
    assert.ok(names.includes('next') && names.includes('validate'), top.stdout);
    const commands = names.flatMap((name) => {
      const page = plugin([name, '--help']);
      assert.equal(page.code, 0, `${name} --help: ${page.stderr}`);
      const examples = /\nExamples:\n([\s\S]*?)\n\S/.exec(page.stdout)?.[1] ?? '';
      return pluginCommands(examples.split('\n'));
    });
    assert.ok(commands.length >= names.length, `found only ${commands.length} examples in ${names.length} help pages`);
    assert.deepEqual(check(commands), []);
  });

  test('the check fails a command that does not run (a glob that expands to two files after -f)', () => {
    const failures = check(pluginCommands(['kubectl secondcron validate --local -f examples/*.yaml']));
    assert.equal(failures.length, 1, failures.join('\n'));
    assert.match(failures[0] ?? '', /takes files with -f/);
    assert.deepEqual(check(pluginCommands(['kubectl secondcron validate --local -f examples/cron-berlin.yaml -f examples/interval-heartbeat.yaml'])), []);
  });
});
