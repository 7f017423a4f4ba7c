// The identity of every operator the shared integration run starts (issue 34, "least privilege,
// measured"): a ServiceAccount bound to exactly the rules the chart grants its own ServiceAccount in
// cluster mode, rendered by the pinned helm, so the whole suite runs on the chart's RBAC; at the end
// of the run its requests in the API server's audit log are judged against those rules: nothing
// refused, nothing granted that was never used.
import { join } from 'node:path';

import { loadAllYaml, type V1ClusterRoleBinding, type V1Deployment, type V1PolicyRule, type V1Role, type RbacV1Subject } from '@kubernetes/client-node';

import { GRANTED_WITHOUT_REQUEST, grantedAccess, usedAccess } from '../integration/helpers/audit-rbac.js';
import { serviceAccountKubeconfig, serviceAccountUser } from '../integration/helpers/helm-rbac.js';
import type { Cluster } from './cluster.js';
import { repoRoot } from './repo-root.js';
import { runCommand } from './run-command.js';

const NAMESPACE = 'secondcron-test';
const NAME = 'secondcron-operator';
/** The operator's requests only (secondcron/<version> (<identity>)), not a test's kubectl with the same token. */
const OPERATOR_AGENT = /^secondcron\//;

export const OPERATOR_USER = serviceAccountUser(NAMESPACE, NAME);

interface Doc {
  kind?: string;
  metadata?: { name?: string; namespace?: string };
}

/**
 * The rules of every Role and ClusterRole the chart, with its default values (cluster mode), binds
 * to the Deployment's ServiceAccount: found through the bindings, so a rule added in a new template
 * is not missed.
 */
export async function chartOperatorRules(binDir: string, scratchDir: string): Promise<V1PolicyRule[]> {
  const release = 'sc';
  const namespace = 'secondcron-system';
  // helm keeps a cache and config under $HOME: the run gets its own, gone with the cluster's dir.
  const helmHome = (sub: string): string => join(scratchDir, 'helm', sub);
  const res = await runCommand(join(binDir, 'helm'), ['template', release, join(repoRoot(), 'helm', 'secondcron'), '--namespace', namespace], {
    env: { ...process.env, HELM_CACHE_HOME: helmHome('cache'), HELM_CONFIG_HOME: helmHome('config'), HELM_DATA_HOME: helmHome('data') },
  });
  if (res.code !== 0) throw new Error(`helm template failed (${res.code}):\n${res.stderr}`);
  const docs = (loadAllYaml(res.stdout) as Array<Doc | null>).filter((d): d is Doc => d !== null);
  const deployment = docs.find((d) => d.kind === 'Deployment') as V1Deployment | undefined;
  const account = deployment?.spec?.template.spec?.serviceAccountName;
  if (!account) throw new Error('the chart renders no Deployment with a serviceAccountName');
  const isOperator = (s: RbacV1Subject): boolean => s.kind === 'ServiceAccount' && s.name === account && s.namespace === namespace;
  const bindings = docs.filter((d) => d.kind === 'ClusterRoleBinding' || d.kind === 'RoleBinding') as Array<Doc & V1ClusterRoleBinding>;
  const rules = bindings
    .filter((b) => (b.subjects ?? []).some(isOperator))
    .flatMap((b) => {
      const roleKind = b.roleRef.kind;
      const role = docs.find((d) => d.kind === roleKind && d.metadata?.name === b.roleRef.name) as V1Role | undefined;
      if (!role) throw new Error(`${b.kind} ${b.metadata?.name} refers to ${roleKind} ${b.roleRef.name}, which the chart does not render`);
      return role.rules ?? [];
    });
  if (rules.length === 0) throw new Error(`the chart binds no rules to ServiceAccount ${namespace}/${account}`);
  return rules;
}

/**
 * Creates the ServiceAccount, a ClusterRole with `rules` and its ClusterRoleBinding, and returns a
 * kubeconfig with a token of it valid for `duration`. The chart's Lease Role (namespaced to the
 * release namespace) becomes cluster-wide here, its resourceNames kept: each test elects in its
 * own namespace.
 */
export async function createOperatorIdentity(cluster: Cluster, rules: V1PolicyRule[], duration: string): Promise<string> {
  const subject = { kind: 'ServiceAccount', name: NAME, namespace: NAMESPACE };
  const roleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: NAME };
  const objects = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: NAME, namespace: NAMESPACE } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: NAME }, rules },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: NAME }, roleRef, subjects: [subject] },
  ];
  const res = await cluster.kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }) });
  if (res.code !== 0) throw new Error(`creating the operator's ServiceAccount and RBAC: ${res.stderr}`);
  return serviceAccountKubeconfig(cluster, NAMESPACE, NAME, cluster.dir, duration);
}

export interface AccessVerdict {
  /** What went wrong; [] when nothing did. */
  problems: string[];
  /** The used set, with request counts and codes, and what was granted but not used. */
  report: string[];
}

/**
 * Judges the operators' requests in the audit log against `rules`: a request refused (403) is always
 * a problem; a verb granted but never sent is one only when `complete` (the whole suite ran: a
 * subset of files need not take every path), unless it is granted without a request of its own
 * (GRANTED_WITHOUT_REQUEST, named with the reason). Every other granted verb has a test that makes an
 * operator send it; the rarest, `get batch/jobs` (a Job read by name after a create's answer was lost
 * and the watch did not show it), is api-faults.test.ts's lost-answer test.
 */
export async function judgeOperatorAccess(auditLogPath: string, rules: V1PolicyRule[], complete: boolean): Promise<AccessVerdict> {
  const used = await usedAccess(auditLogPath, OPERATOR_USER, OPERATOR_AGENT);
  const codes = new Map<string, Map<string, number>>();
  for (const u of used) {
    const byCode = codes.get(u.key) ?? new Map<string, number>();
    const code = String(u.code ?? '?');
    byCode.set(code, (byCode.get(code) ?? 0) + 1);
    codes.set(u.key, byCode);
  }
  const granted = grantedAccess(rules);
  const report = [`${used.length} requests of ${OPERATOR_USER} (User-Agent secondcron/…); used:`];
  for (const [key, byCode] of [...codes].sort((a, b) => a[0].localeCompare(b[0]))) {
    const tally = [...byCode].map(([c, n]) => `${c}×${n}`).join(' ');
    // Requests outside the rules that succeed are the API server's own grants to every user (discovery).
    report.push(`  ${key}: ${tally}${granted.has(key) ? '' : ' (not in the chart\'s rules)'}`);
  }
  const problems: string[] = [];
  const refused = [...codes].filter(([, byCode]) => byCode.has('403')).map(([key]) => key);
  if (refused.length > 0) problems.push(`refused (403), the chart's rules lack them: ${refused.join(', ')}`);
  const excused = GRANTED_WITHOUT_REQUEST;
  const unused = [...granted].filter((k) => !codes.has(k) && !(k in excused)).sort();
  if (unused.length > 0) {
    if (complete) problems.push(`granted by the chart but never used by any operator in the whole run: ${unused.join(', ')}`);
    else report.push(`  granted, not used by these files (judged only on a whole run): ${unused.join(', ')}`);
  }
  for (const [k, why] of Object.entries(excused)) {
    if (!granted.has(k)) problems.push(`${k} is excused as unused but not granted any more: drop it from the exceptions`);
    else if (!codes.has(k)) report.push(`  granted, not used: ${k}: ${why}`);
  }
  return { problems, report };
}
