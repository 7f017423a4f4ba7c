// `validate -f FILE…`: what the operator would say about each SecondCronJob (its own schedule checks
// and Job-template dry run, src/controller/verdict.ts) plus a server-side dry run of the resource
// itself (the CRD schema and CEL rules, strict field validation). Exit 1 if anything is wrong.
// --local: no cluster, only the operator's own checks (schedule, time zone).
import { randomUUID } from 'node:crypto';

import { type SecondCronJob, collectionPath } from '../../api/resources.js';
import { rfc3339 } from '../../controller/status.js';
import { dryRunJob } from '../../controller/verdict.js';
import { compileResourceSchedule } from '../../schedule/index.js';
import { ApiError, isAlreadyExists } from '../../kube/api-error.js';
import type { KubeRest } from '../../kube/rest.js';
import type { PluginContext } from '../context.js';
import { PluginError, describeApiError } from '../errors.js';
import { readResources } from '../manifests.js';
import { FIELD_MANAGER, asPluginError, scjPath } from '../resources.js';

interface Finding {
  check: 'Schedule' | 'Resource' | 'JobTemplate';
  message: string;
}

export async function validateCommand(cmd: { files: string[]; local: boolean }, ctx: PluginContext): Promise<void> {
  const resources = readResources(cmd.files, ctx.readStdin);
  const { rest, namespace } = cmd.local ? { rest: undefined, namespace: undefined } : await ctx.target();
  let invalid = 0;
  for (const { origin, object } of resources) {
    const ns = object.metadata.namespace || namespace;
    const scj = { ...object, metadata: { ...object.metadata, ...(ns ? { namespace: ns } : {}) } };
    const { findings, describe } = rest ? await judge(rest, scj, ctx.nowMs()) : judgeLocally(scj, ctx.nowMs());
    const id = `secondcronjob.secondcron.io/${object.metadata.name} (${ns ? `namespace ${ns}, ` : ''}${origin})`;
    if (findings.length === 0) {
      ctx.out(`${id}: valid${rest ? '' : ' (local: schedule and time zone; the CRD schema and the Job template need a cluster)'}: ${describe}`);
      continue;
    }
    invalid++;
    ctx.out([`${id}: INVALID`, ...findings.map((f) => `  ${f.check}: ${f.message}`)].join('\n'));
  }
  if (invalid > 0) throw new PluginError(`${invalid} of ${resources.length} SecondCronJob(s) invalid`);
}

/** The operator's own verdict on the schedule, as it would judge the resource created now. */
function judgeLocally(fromFile: SecondCronJob, nowMs: number): { findings: Finding[]; describe: string } {
  const compiled = compileResourceSchedule(asCreatedNow(fromFile, nowMs), nowMs);
  return compiled.ok ? { findings: [], describe: compiled.describe } : { findings: [{ check: 'Schedule', message: `${compiled.reason}: ${compiled.message}` }], describe: '' };
}

async function judge(rest: KubeRest, fromFile: SecondCronJob, nowMs: number): Promise<{ findings: Finding[]; describe: string }> {
  const findings: Finding[] = [];
  // The server's answer is the resource as it would be stored: defaults applied, a uid, a creation time.
  let admitted: SecondCronJob | undefined;
  try {
    admitted = await dryRunWrite(rest, fromFile);
  } catch (err) {
    if (!(err instanceof ApiError) || err.status === 0 || err.status >= 500) throw asPluginError(err, rest);
    // 404 for the collection itself (not for a missing namespace, which is a finding).
    if (err.status === 404 && /could not find the requested resource/.test(err.serverMessage ?? '')) throw new PluginError(`the SecondCronJob CRD is not installed in this cluster (${describeApiError(err, rest.server)})`);
    findings.push({ check: 'Resource', message: err.serverMessage ?? err.message });
  }
  const scj = admitted ?? asCreatedNow(fromFile, nowMs);
  let describe = '';
  const compiled = compileResourceSchedule(scj, nowMs);
  if (compiled.ok) describe = compiled.describe;
  else findings.push({ check: 'Schedule', message: `${compiled.reason}: ${compiled.message}` });
  if (scj.spec && typeof scj.spec.jobTemplate === 'object' && scj.spec.jobTemplate !== null) {
    try {
      const verdict = await dryRunJob(rest, scj, nowMs);
      if (!verdict.ok) findings.push({ check: 'JobTemplate', message: `${verdict.reason}: ${verdict.message}` });
    } catch (err) {
      throw asPluginError(err, rest);
    }
  }
  return { findings, describe };
}

/**
 * A create (or, if the resource exists, a replace) that the server checks and does not store. Not a
 * server-side apply: that reports an unknown field as a 500 without the field's index, while create and
 * update reject it as kubectl apply does, with its path.
 */
async function dryRunWrite(rest: KubeRest, scj: SecondCronJob): Promise<SecondCronJob> {
  const namespace = scj.metadata.namespace as string;
  const query = { dryRun: 'All', fieldValidation: 'Strict', fieldManager: FIELD_MANAGER };
  try {
    return await rest.request<SecondCronJob>({ verb: 'create', path: collectionPath(namespace), body: scj, query });
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
  const existing = await rest.request<SecondCronJob>({ verb: 'get', path: scjPath(namespace, scj.metadata.name) });
  const body = { ...scj, metadata: { ...scj.metadata, resourceVersion: existing.metadata.resourceVersion } };
  return rest.request<SecondCronJob>({ verb: 'update', path: scjPath(namespace, scj.metadata.name), body, query });
}


/** What the server would add on create (a uid, a creation time), where the file has none. */
function asCreatedNow(scj: SecondCronJob, nowMs: number): SecondCronJob {
  return { ...scj, metadata: { ...scj.metadata, uid: scj.metadata.uid || randomUUID(), creationTimestamp: scj.metadata.creationTimestamp || rfc3339(nowMs) } };
}
