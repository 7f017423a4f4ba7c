// RBAC judged by the API server's audit log (test/cluster's `auditUsers`): which verbs on which
// resources a user actually sent, and how they compare with the rules a chart grants.
import { readFileSync } from 'node:fs';

import type { V1PolicyRule } from '@kubernetes/client-node';

interface AuditEvent {
  auditID: string;
  verb: string;
  user?: { username?: string };
  userAgent?: string;
  requestURI: string;
  objectRef?: { apiGroup?: string; resource?: string; subresource?: string };
  responseStatus?: { code?: number };
}

export interface UsedAccess {
  /** "verb group/resource[/subresource]" ("" for the core group), or "verb <path>" for a non-resource URL. */
  key: string;
  code: number | undefined;
}

function accessKey(verb: string, group: string, resource: string): string {
  return `${verb} ${group}/${resource}`;
}

/**
 * Every request `username` sent with a User-Agent matching `agent`, once each (a watch is logged when
 * it starts and again when it ends).
 */
export function usedAccess(auditLogPath: string, username: string, agent: RegExp): UsedAccess[] {
  const seen = new Map<string, UsedAccess>();
  for (const line of readFileSync(auditLogPath, 'utf8').split('\n')) {
    if (!line.includes(username)) continue;
    const e = JSON.parse(line) as AuditEvent;
    if (e.user?.username !== username || !agent.test(e.userAgent ?? '')) continue;
    const ref = e.objectRef;
    const key = ref?.resource
      ? accessKey(e.verb, ref.apiGroup ?? '', ref.subresource ? `${ref.resource}/${ref.subresource}` : ref.resource)
      : `${e.verb} ${e.requestURI.split('?')[0]}`;
    // The last stage of a request carries its final code.
    seen.set(e.auditID, { key, code: e.responseStatus?.code });
  }
  return [...seen.values()];
}

/** The "verb group/resource" pairs the rules grant (resource names and namespaces aside). */
export function grantedAccess(rules: V1PolicyRule[]): Set<string> {
  const granted = new Set<string>();
  for (const rule of rules) {
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) for (const verb of rule.verbs) granted.add(accessKey(verb, group, resource));
    }
  }
  return granted;
}
