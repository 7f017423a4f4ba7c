// Token files and exec plugins refresh the way client-go refreshes them (real files, real plugin
// scripts run as child processes).
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { CredentialsUnavailable, isRetryable } from '../../../src/kube/api-error.js';
import { ExecCredentialPlugin } from '../../../src/kube/exec-credential.js';
import { TokenFile } from '../../../src/kube/token-file.js';

const dir = mkdtempSync(join(tmpdir(), 'secondcron-credentials-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('token file: a read error keeps the last good token; without one it is a retryable error', async () => {
  const path = join(dir, 'token');
  let now = 0;
  const errors: string[] = [];
  const source = new TokenFile(path, { now: () => now, onReadError: (err) => errors.push(err.message) });
  await assert.rejects(source.current(), (err: unknown) => err instanceof CredentialsUnavailable && isRetryable(err));
  writeFileSync(path, 'good\n');
  assert.equal(await source.current(), 'good');
  unlinkSync(path);
  now += 61_000;
  assert.equal(await source.current(), 'good', 'the last good token is kept');
  assert.equal(errors.length, 2);
  writeFileSync(path, 'newer\n');
  now += 1_000;
  assert.equal(await source.current(), 'newer', 'and the file is read again a second later');
});

/** An exec plugin script: counts its runs in a file, then prints what `body` (shell) echoes. */
function plugin(name: string, body: string): { command: string; runs: () => number } {
  const counter = join(dir, `${name}.runs`);
  writeFileSync(counter, '');
  const command = join(dir, name);
  writeFileSync(command, `#!/bin/sh\necho run >> '${counter}'\n${body}\n`);
  chmodSync(command, 0o755);
  return { command, runs: () => readFileSync(counter, 'utf8').split('\n').filter(Boolean).length };
}

const V1 = 'client.authentication.k8s.io/v1';

function credential(token: string, expires?: string): string {
  const status = expires ? `"token":"${token}","expirationTimestamp":"${expires}"` : `"token":"${token}"`;
  return `echo '{"apiVersion":"${V1}","kind":"ExecCredential","status":{${status}}}'`;
}

test('exec plugin: concurrent requests share one run; the result is cached until the server rejects it', async () => {
  const p = plugin('shared', `sleep 0.2\n${credential('t1')}`);
  const exec = new ExecCredentialPlugin({ exec: { command: p.command, apiVersion: V1 }, cluster: { server: 'https://x' }, user: 'u' });
  const results = await Promise.all(Array.from({ length: 10 }, () => exec.current()));
  assert.equal(p.runs(), 1, 'ten concurrent requests, one plugin run');
  assert.ok(results.every((r) => r.token === 't1'));
  await exec.current();
  assert.equal(p.runs(), 1, 'no expiry: cached');
  exec.rejected(results[0] as (typeof results)[0]);
  await exec.current();
  assert.equal(p.runs(), 2, 'rejected by the server: run again');
});

test('exec plugin: run again once the credential has expired', async () => {
  const p = plugin('expiring', credential('t', '2026-01-01T00:00:10Z'));
  let now = Date.parse('2026-01-01T00:00:00Z');
  const exec = new ExecCredentialPlugin({ exec: { command: p.command, apiVersion: V1 }, cluster: { server: 'https://x' }, user: 'u', now: () => now });
  await exec.current();
  await exec.current();
  assert.equal(p.runs(), 1);
  now += 10_000;
  await exec.current();
  assert.equal(p.runs(), 2);
});

test('exec plugin: a hung plugin fails the request at its deadline and is killed after the run timeout', async () => {
  const p = plugin('hung', `sleep 30\n${credential('never')}`);
  const exec = new ExecCredentialPlugin({ exec: { command: p.command, apiVersion: V1 }, cluster: { server: 'https://x' }, user: 'u', timeoutMs: 1_500 });
  const started = Date.now();
  await assert.rejects(exec.current(AbortSignal.timeout(200)), /timeout|aborted/i);
  const waited = Date.now() - started;
  assert.ok(waited < 1_000, `the request gave up at its own deadline (after ${waited} ms)`);
  await assert.rejects(exec.current(), (err: unknown) => err instanceof CredentialsUnavailable && /killed/.test(err.message));
});

test('exec plugin: failures say what went wrong, with the install hint', async () => {
  const failing = plugin('failing', 'echo "no login" >&2; exit 3');
  const exec = new ExecCredentialPlugin({ exec: { command: failing.command, apiVersion: V1, installHint: 'install it from x' }, cluster: {}, user: 'u' });
  await assert.rejects(exec.current(), /exited with code 3: no login\ninstall it from x/);
  const wrongVersion = plugin('wrong-version', `echo '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"x"}}'`);
  const exec2 = new ExecCredentialPlugin({ exec: { command: wrongVersion.command, apiVersion: V1 }, cluster: {}, user: 'u' });
  await assert.rejects(exec2.current(), /apiVersion "client.authentication.k8s.io\/v1beta1" differs/);
  const infoDump = plugin('info', `printf '%s' "$KUBERNETES_EXEC_INFO" > '${join(dir, 'info.json')}'\n${credential('x')}`);
  await new ExecCredentialPlugin({ exec: { command: infoDump.command, apiVersion: V1, provideClusterInfo: true, env: [{ name: 'A', value: 'b' }] }, cluster: { server: 'https://s' }, user: 'u' }).current();
  assert.deepEqual(JSON.parse(readFileSync(join(dir, 'info.json'), 'utf8')), { apiVersion: V1, kind: 'ExecCredential', spec: { interactive: false, cluster: { server: 'https://s' } } });
});
