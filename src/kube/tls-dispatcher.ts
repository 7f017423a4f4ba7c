// TLS for the API server connection: the CA and server name stay, the client certificate may change
// (files rotated by cert-manager or a node agent, an exec plugin's short-lived certificates). Each
// certificate gets its own keep-alive pool; when it changes, new requests go to a new pool and the old
// one closes once its requests (watches included) have ended.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { createSecureContext } from 'node:tls';

import { Agent, type Dispatcher, ProxyAgent } from 'undici';

export interface ClientCert {
  cert: Buffer;
  key: Buffer;
}

export interface ServerTls {
  ca?: Buffer;
  rejectUnauthorized?: boolean;
  servername?: string;
  /** A kubeconfig cluster's proxy-url (http or https): requests tunnel through it with CONNECT. */
  proxy?: string;
}

export class DispatcherPool {
  private current: { cert: ClientCert | undefined; dispatcher: Dispatcher; close: () => Promise<unknown> } | undefined;

  constructor(private readonly server: ServerTls) {}

  for(cert: ClientCert | undefined): Dispatcher {
    if (this.current && sameCert(this.current.cert, cert)) return this.current.dispatcher;
    const previous = this.current;
    this.current = { cert, ...this.build(cert) };
    // close() lets the requests on the old pool finish; only new ones use the new certificate.
    void previous?.close().catch(() => undefined);
    return this.current.dispatcher;
  }

  private build(cert: ClientCert | undefined): { dispatcher: Dispatcher; close: () => Promise<unknown> } {
    const { rejectUnauthorized, servername, ca, proxy } = this.server;
    // One TLS context per pool: building it (parsing the CA bundle) per connection was 4 % of the
    // operator's CPU in a 500-Job burst.
    const secureContext = createSecureContext({ ca, ...(cert ? { cert: cert.cert, key: cert.key } : {}) });
    const tls = { secureContext, ...(rejectUnauthorized === false ? { rejectUnauthorized } : {}), ...(servername ? { servername } : {}) };
    // Idle connections stay for a minute (client-go keeps them 90 s): a burst after a quiet spell
    // should not start with a TLS handshake per request.
    const keepAliveTimeout = 60_000;
    const http1 = (): Dispatcher => keepConnections(proxy ? new ProxyAgent({ uri: proxy, requestTls: tls, keepAliveTimeout, allowH2: false }) : new Agent({ connect: tls, keepAliveTimeout, allowH2: false }));
    // HTTP/1.1 through a proxy's tunnel: HTTP/2 over CONNECT is not tested here.
    if (proxy) {
      const dispatcher = http1();
      return { dispatcher, close: () => dispatcher.close() };
    }
    // HTTP/2, as client-go speaks to the API server: requests in flight share one connection. Over
    // HTTP/1.1 each needed its own: 500 Jobs due in one second opened ~150 TLS connections at the slot,
    // and the last create reached the API server 728–984 ms after it (1,260 at most with 400 in flight:
    // more handshakes); over HTTP/2 with 400 in flight, 529–541 ms, against the token bucket's floor of
    // 500 (bench/README.md, issue 36).
    // Streams per connection: as many as the server's SETTINGS allow (undici keeps to 100 unless told;
    // when a connection is full the pool opens another). A PING every 15 s, and a connection whose last
    // PING went unanswered is dropped: a stream that times out resets only itself, so without this a
    // connection that died silently would keep every new request until the kernel gave up on it
    // (client-go: 30 s, then 15 s). keepConnections still: a server that declines HTTP/2 gets HTTP/1.1.
    const h2 = keepConnections(new Agent({ connect: tls, keepAliveTimeout, allowH2: true, h2Options: { maxConcurrentStreams: 1000, pingInterval: 15_000 } }));
    // A request with a header given as a list goes over HTTP/1.1 (its own pool, opened on first use):
    // over HTTP/2 undici joins the list into one value, so `--as-group a --as-group b` would
    // impersonate a single group "a, b".
    let lists: Dispatcher | undefined;
    const dispatcher = h2.compose((dispatch) => (opts, handler) => (sendsList(opts.headers) ? (lists ??= http1()).dispatch(opts, handler) : dispatch(opts, handler)));
    return { dispatcher, close: () => Promise.all([h2.close(), lists?.close()]) };
  }
}

/** True when some header goes out more than once: a list of values, or a name given twice. */
function sendsList(headers: Dispatcher.DispatchOptions['headers']): boolean {
  if (!headers) return false;
  let entries: Iterable<[string, unknown]>;
  if (Array.isArray(headers)) entries = Array.from({ length: headers.length >> 1 }, (_, i): [string, unknown] => [String(headers[2 * i]), headers[2 * i + 1]]);
  else if (Symbol.iterator in headers) entries = headers as Iterable<[string, unknown]>;
  else entries = Object.entries(headers);
  const names = new Set<string>();
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    if ((Array.isArray(value) && value.length > 1) || names.has(lower)) return true;
    names.add(lower);
  }
  return false;
}

function sameCert(a: ClientCert | undefined, b: ClientCert | undefined): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  return a.cert.equals(b.cert) && a.key.equals(b.key);
}

/**
 * undici closes a connection after any request whose method "does not expect a body" carries one —
 * and every DELETE of ours carries DeleteOptions (propagation policy, uid precondition), as client-go's
 * do. The API server reads those bodies, so the connection is sound: without this, each history
 * deletion cost a new TLS handshake (12 % of the operator's CPU at 100 Jobs/s).
 */
export function keepConnections(dispatcher: Dispatcher): Dispatcher {
  return dispatcher.compose((dispatch) => (opts, handler) => dispatch({ ...opts, reset: false }, handler));
}

/** How often the certificate files are looked at (a stat each); client-go polls every 5 minutes. */
export const CERT_FILE_CHECK_MS = 1_000;

/**
 * A client certificate and key from files, re-read when either file changes. A pair caught half-way
 * through a rotation (new certificate, old key) is not used: the last matching pair stays until both
 * files agree again.
 */
export class ClientCertFiles {
  private pair: ClientCert;
  private stamp: string;
  private checkedAtMs: number;

  constructor(
    private readonly certPath: string,
    private readonly keyPath: string,
    private readonly now: () => number = Date.now,
    private readonly onError: (err: Error) => void = () => undefined,
  ) {
    this.stamp = this.fileStamp();
    this.pair = this.readPair();
    if (!matches(this.pair)) throw new Error(`client certificate ${certPath} does not match key ${keyPath}`);
    this.checkedAtMs = now();
  }

  current(): ClientCert {
    if (this.now() - this.checkedAtMs < CERT_FILE_CHECK_MS) return this.pair;
    this.checkedAtMs = this.now();
    try {
      const stamp = this.fileStamp();
      if (stamp === this.stamp) return this.pair;
      const pair = this.readPair();
      if (!matches(pair)) throw new Error(`client certificate ${this.certPath} does not match key ${this.keyPath} (yet); keeping the previous pair`);
      this.pair = pair;
      this.stamp = stamp;
    } catch (err) {
      this.onError(err instanceof Error ? err : new Error(String(err)));
    }
    return this.pair;
  }

  private fileStamp(): string {
    return [this.certPath, this.keyPath].map((p) => {
      const s = statSync(p);
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    }).join('|');
  }

  private readPair(): ClientCert {
    return { cert: readFileSync(this.certPath), key: readFileSync(this.keyPath) };
  }
}

function matches(pair: ClientCert): boolean {
  try {
    return new X509Certificate(pair.cert).checkPrivateKey(createPrivateKey(pair.key));
  } catch {
    return false;
  }
}
