// RBAC judged by the API server's audit log (test/cluster's `auditUsers`): which verbs on which
// resources a user actually sent, and how they compare with the rules a chart grants.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

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

/**
 * Granted and needed, but never a request of the operator: the OwnerReferencesPermissionEnforcement
 * admission plugin checks it when the operator creates a Job whose ownerReference sets
 * blockOwnerDeletion (without it that create is refused).
 */
export const GRANTED_WITHOUT_REQUEST: Record<string, string> = {
  'update secondcron.io/secondcronjobs/finalizers':
    'never a request: the OwnerReferencesPermissionEnforcement admission plugin checks it when a Job with blockOwnerDeletion is created',
};

function accessKey(verb: string, group: string, resource: string): string {
  return `${verb} ${group}/${resource}`;
}

/**
 * Every request `username` sent with a User-Agent matching `agent`, once each (a watch is logged when
 * it starts and again when it ends). Read line by line: the whole integration run's log is large.
 */
export async function usedAccess(auditLogPath: string, username: string, agent: RegExp): Promise<UsedAccess[]> {
  const seen = new Map<string, UsedAccess>();
  for await (const line of createInterface({ input: createReadStream(auditLogPath), crlfDelay: Infinity })) {
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

/**
 * The "verb group/resource" pairs the rules grant (resource names and namespaces aside), and
 * "verb <path>" for their non-resource URLs, as `usedAccess` keys them.
 */
export function grantedAccess(rules: V1PolicyRule[]): Set<string> {
  const granted = new Set<string>();
  for (const rule of rules) {
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) for (const verb of rule.verbs) granted.add(accessKey(verb, group, resource));
    }
    for (const url of rule.nonResourceURLs ?? []) for (const verb of rule.verbs) granted.add(`${verb} ${url}`);
  }
  return granted;
}
