// The proxy client-go would use for the API server when the kubeconfig names none: Go's
// http.ProxyFromEnvironment (golang.org/x/net/http/httpproxy), which client-go's default transport
// uses in and out of a cluster. HTTPS_PROXY (else https_proxy) for an https server, HTTP_PROXY (else
// http_proxy) for http; never for localhost or a loopback address; NO_PROXY (else no_proxy) lists
// exceptions: "*", CIDRs, IPs, and domains ("example.com" matches it and its subdomains,
// ".example.com" and "*.example.com" only subdomains), each optionally with a port.
import { BlockList, isIP } from 'node:net';

import { KubeconfigError } from './kubeconfig.js';

/** The proxy URL for requests to `server`, or undefined for a direct connection. */
export function proxyFromEnvironment(server: string, env: NodeJS.ProcessEnv): string | undefined {
  const url = new URL(server);
  const https = url.protocol === 'https:';
  const raw = https ? anyOf(env, 'HTTPS_PROXY', 'https_proxy') : anyOf(env, 'HTTP_PROXY', 'http_proxy');
  if (!raw) return undefined;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const port = url.port || (https ? '443' : '80');
  if (!useProxy(host, port, anyOf(env, 'NO_PROXY', 'no_proxy') ?? '')) return undefined;
  // Go reads a proxy without a scheme as http://.
  const proxy = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  if (!/^https?:\/\//i.test(proxy)) {
    throw new KubeconfigError(`${https ? 'HTTPS_PROXY' : 'HTTP_PROXY'} ${new URL(proxy).protocol}// proxies are not supported; set proxy-url in the kubeconfig cluster instead`);
  }
  return proxy;
}

function anyOf(env: NodeJS.ProcessEnv, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = env[name];
    if (value) return value;
  }
  return undefined;
}

function useProxy(host: string, port: string, noProxy: string): boolean {
  if (host === 'localhost') return false;
  const family = isIP(host);
  if (family !== 0 && isLoopback(host, family)) return false;
  for (const entry of noProxy.split(',').map((e) => e.trim().toLowerCase()).filter((e) => e !== '')) {
    if (entry === '*') return false;
    if (entry.includes('/')) {
      if (family !== 0 && inCidr(host, family, entry)) return false;
      continue;
    }
    const [entryHost, entryPort] = splitHostPort(entry);
    if (entryHost === '' || (entryPort !== '' && entryPort !== port)) continue;
    if (isIP(entryHost) !== 0) {
      if (family !== 0 && sameIp(host, entryHost)) return false;
      continue;
    }
    // Domains: "example.com" matches itself and subdomains; ".example.com" and "*.example.com" only subdomains.
    const domain = entryHost.startsWith('*.') ? entryHost.slice(1) : entryHost;
    if (domain.startsWith('.') ? host.endsWith(domain) : host === domain || host.endsWith(`.${domain}`)) return false;
  }
  return true;
}

/** "host:port", "[v6]:port", or just a host (a bare IPv6 address has colons but no port). */
function splitHostPort(entry: string): [string, string] {
  const bracketed = /^\[([^\]]*)\](?::(\d*))?$/.exec(entry);
  if (bracketed) return [bracketed[1] ?? '', bracketed[2] ?? ''];
  if (isIP(entry) === 6) return [entry, ''];
  const colon = entry.lastIndexOf(':');
  return colon < 0 ? [entry, ''] : [entry.slice(0, colon), entry.slice(colon + 1)];
}

function isLoopback(ip: string, family: number): boolean {
  const list = new BlockList();
  list.addSubnet('127.0.0.0', 8, 'ipv4');
  list.addAddress('::1', 'ipv6');
  return list.check(ip, family === 6 ? 'ipv6' : 'ipv4');
}

function inCidr(ip: string, family: number, cidr: string): boolean {
  const [net, bits] = cidr.split('/');
  const netFamily = isIP(net ?? '');
  const prefix = Number(bits);
  if (netFamily === 0 || !Number.isInteger(prefix)) return false;
  const list = new BlockList();
  try {
    list.addSubnet(net as string, prefix, netFamily === 6 ? 'ipv6' : 'ipv4');
  } catch {
    return false; // not a CIDR Go would parse either
  }
  return list.check(ip, family === 6 ? 'ipv6' : 'ipv4');
}

function sameIp(a: string, b: string): boolean {
  const list = new BlockList();
  list.addAddress(b, isIP(b) === 6 ? 'ipv6' : 'ipv4');
  return list.check(a, isIP(a) === 6 ? 'ipv6' : 'ipv4');
}
