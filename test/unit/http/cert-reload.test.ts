// A mounted serving certificate renewed under a running /metrics server: the Secret's files are
// swapped the way the kubelet's atomic writer does it (a new timestamped directory, a `..data_tmp`
// symlink renamed over `..data`, the old directory removed), and new TLS connections get the new
// certificate without a restart. A half-written pair is not served; the previous one stays.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { Registry } from 'prom-client';

import { systemTimers } from '../../../src/clock/index.js';
import { certificateFromDir } from '../../../src/http/cert-watcher.js';
import { serveMetrics } from '../../../src/http/servers.js';
import { MetricsExposition } from '../../../src/metrics/exposition.js';
import { type TestCertificate, selfSignedCertificate } from '../../support/self-signed-cert.js';
import { presentedCertificate } from '../../support/tls-peer.js';

const volume = mkdtempSync(join(tmpdir(), 'secondcron-cert-volume-'));
after(() => rmSync(volume, { recursive: true, force: true }));

let generation = 0;
/** kubelet AtomicWriter: write a new payload dir, point ..data at it with one rename, drop the old dir. */
function publish(files: Record<string, string>): void {
  const dir = `..2026_12_03_16_00_0${generation++}.${process.pid}`;
  mkdirSync(join(volume, dir));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(volume, dir, name), text);
  symlinkSync(dir, join(volume, '..data_tmp'));
  renameSync(join(volume, '..data_tmp'), join(volume, '..data'));
  for (const name of Object.keys(files)) {
    try {
      symlinkSync(join('..data', name), join(volume, name));
    } catch {
      // the user-visible link exists from the first generation on
    }
  }
  if (generation > 1) rmSync(join(volume, `..2026_12_03_16_00_0${generation - 2}.${process.pid}`), { recursive: true });
}

async function eventuallyPresents(port: number, cert: TestCertificate): Promise<void> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    if ((await presentedCertificate(port)).fingerprint256 === cert.fingerprint256) return;
    if (Date.now() > deadline) assert.fail(`the server did not switch to ${cert.fingerprint256}`);
    await sleep(20);
  }
}

test('a renewed Secret is served to new connections; a mismatched pair is reported once and not served', async () => {
  const [first, second, third] = await Promise.all(['127.0.0.1', '127.0.0.1', '127.0.0.1'].map((cn) => selfSignedCertificate(cn)));
  assert.ok(first && second && third);
  publish({ 'tls.crt': first.cert, 'tls.key': first.key });
  const errors: string[] = [];
  const reloads: string[] = [];
  const certificate = certificateFromDir(volume, { timers: systemTimers, pollMs: 50, onError: (err) => errors.push(err.message), onReload: (fp) => reloads.push(fp) });
  const server = await serveMetrics(0, new MetricsExposition(new Registry(), undefined), { secure: { certificate, authorize: () => Promise.resolve({ status: 200 }) } });
  try {
    assert.equal((await presentedCertificate(server.port)).fingerprint256, first.fingerprint256);

    publish({ 'tls.crt': second.cert, 'tls.key': second.key });
    await eventuallyPresents(server.port, second);
    assert.deepEqual(reloads, [second.fingerprint256]);

    // A certificate with someone else's key: kept serving the second pair, told once however many polls.
    publish({ 'tls.crt': third.cert, 'tls.key': first.key });
    await sleep(400);
    assert.equal((await presentedCertificate(server.port)).fingerprint256, second.fingerprint256);
    assert.equal(errors.length, 1, errors.join('; '));
    assert.match(errors[0] ?? '', /does not match/);

    publish({ 'tls.crt': third.cert, 'tls.key': third.key });
    await eventuallyPresents(server.port, third);
    assert.deepEqual(reloads, [second.fingerprint256, third.fingerprint256]);
  } finally {
    await server.close();
  }
});

test('a directory without a usable pair fails at start with the file names', () => {
  const empty = mkdtempSync(join(volume, 'empty-'));
  assert.throws(() => certificateFromDir(empty, { timers: systemTimers, onError: () => undefined }), /tls\.crt/);
});
