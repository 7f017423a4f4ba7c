// Minimal HTTPS calls used while the cluster boots (health probes, creating the fake nodes), before
// a kubeconfig exists and without spawning kubectl for each poll.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface HttpResult {
  status: number;
  body: string;
}

export interface HttpOptions {
  method?: string;
  body?: string;
  /** PEM CA bundle to verify the server; without it the certificate is not checked (health probes
   *  of KCM/scheduler, whose serving certs are self-signed in memory). */
  ca?: string;
  token?: string;
  timeoutMs?: number;
}

export function httpCall(url: string, opts: HttpOptions = {}): Promise<HttpResult> {
  const u = new URL(url);
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(opts.body));
  }
  const common = { method: opts.method ?? 'GET', headers, timeout: opts.timeoutMs ?? 5_000 };
  return new Promise<HttpResult>((resolve, reject) => {
    const onResponse = (res: import('node:http').IncomingMessage): void => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    };
    const req = u.protocol === 'https:'
      ? httpsRequest(u, { ...common, ca: opts.ca, rejectUnauthorized: opts.ca !== undefined, agent: false }, onResponse)
      : httpRequest(u, { ...common, agent: false }, onResponse);
    req.on('timeout', () => req.destroy(new Error(`timeout calling ${url}`)));
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

/** True when the URL answers 200; any error (not listening yet, TLS, 5xx) is false. */
export async function isOk(url: string, opts: HttpOptions = {}): Promise<boolean> {
  try {
    return (await httpCall(url, { ...opts, timeoutMs: opts.timeoutMs ?? 2_000 })).status === 200;
  } catch {
    return false;
  }
}
