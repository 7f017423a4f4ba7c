// The flood scenario's control: a TLS port in a process of its own that refuses every request with 401, the
// way the operator's secure /metrics answers a refusal (node:http, the status alone), and asks no
// one. The same junk flood aimed at it costs this machine what receiving the flood costs anywhere on
// it (the flooder, TLS, HTTP) while the operator sees none of it: the trigger latency's move in
// those windows is the machine's share, beside which the operator's own move is read.
// The parent forks it and gets its port in the first message; it exits when the parent does.
import { type ChildProcess, fork } from 'node:child_process';
import { createServer } from 'node:https';
import { fileURLToPath } from 'node:url';

import { selfSignedCertificate } from '../../src/http/self-signed.js';

export class DecoyServer {
  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {}

  get pid(): number | undefined {
    return this.child.pid;
  }

  static start(): Promise<DecoyServer> {
    const child = fork(fileURLToPath(import.meta.url), ['--child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`decoy server exited (${code}) before listening`));
      child.once('exit', onExit);
      child.once('message', (m: unknown) => {
        child.off('exit', onExit);
        if (isListening(m)) resolve(new DecoyServer(child, m.port));
        else reject(new Error(`decoy server sent ${JSON.stringify(m)} instead of its port`));
      });
    });
  }

  stop(): Promise<void> {
    if (this.child.exitCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.disconnect();
    });
  }
}

function isListening(m: unknown): m is { port: number } {
  return typeof m === 'object' && m !== null && 'port' in m && typeof m.port === 'number';
}

const BODY = 'Unauthorized\n';

async function serve(): Promise<void> {
  const pem = await selfSignedCertificate({ commonName: 'decoy', dnsNames: [], ipAddresses: ['127.0.0.1'], notBefore: new Date(Date.now() - 60_000), validDays: 1 });
  const server = createServer({ cert: pem.cert, key: pem.key }, (req, res) => {
    req.resume();
    res.writeHead(401, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(BODY) });
    res.end(BODY);
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (address !== null && typeof address === 'object') process.send?.({ port: address.port });
  });
  process.on('disconnect', () => process.exit(0));
}

if (process.argv[2] === '--child') void serve();
