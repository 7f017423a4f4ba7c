// Builds the Job for one slot. The name is a function of the slot, so a second create of the same
// slot (a retry, a restarted or deposed leader) fails with AlreadyExists: the exactly-once lock.
import { ANNOTATION_INSTANTIATE, ANNOTATION_SCHEDULED_AT, API_VERSION, type JobManifest, KIND, LABEL_OWNER, type SecondCronJob } from '../api/resources.js';

export function jobName(scjName: string, slotMs: number): string {
  return `${scjName}-${Math.floor(slotMs / 1000)}`;
}

export function buildJob(scj: SecondCronJob, slotMs: number): JobManifest {
  return jobFromTemplate(scj, jobName(scj.metadata.name, slotMs), { [ANNOTATION_SCHEDULED_AT]: new Date(slotMs).toISOString() });
}

/** Job names are pod label values: at most 63 characters. */
const MAX_JOB_NAME = 63;
const MANUAL_INFIX = '-manual-';
/** Kubernetes' generateName alphabet (no vowels, no look-alikes); the first character is a letter. */
const LETTERS = 'bcdfghjklmnpqrstvwxz';
const ALPHABET = `${LETTERS}2456789`;

/**
 * A Job started by hand, like `kubectl create job --from=cronjob/x`: "<name>-manual-<5 random>". A slot's
 * Job name ends in "-<digits>"; this one ends in a part that starts with a letter, so it can never
 * take the name of any slot of any SecondCronJob.
 */
export function manualJobName(scjName: string, random: () => number): string {
  let suffix = LETTERS[Math.floor(random() * LETTERS.length)] as string;
  while (suffix.length < 5) suffix += ALPHABET[Math.floor(random() * ALPHABET.length)];
  const base = scjName.slice(0, MAX_JOB_NAME - MANUAL_INFIX.length - suffix.length).replace(/-+$/, '');
  return `${base}${MANUAL_INFIX}${suffix}`;
}

export function buildManualJob(scj: SecondCronJob, random: () => number): JobManifest {
  return jobFromTemplate(scj, manualJobName(scj.metadata.name, random), { [ANNOTATION_INSTANTIATE]: 'manual' });
}

function jobFromTemplate(scj: SecondCronJob, name: string, annotations: Record<string, string>): JobManifest {
  const template = scj.spec.jobTemplate;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: scj.metadata.namespace,
      labels: { ...template.metadata?.labels, [LABEL_OWNER]: scj.metadata.name },
      annotations: { ...template.metadata?.annotations, ...annotations },
      ownerReferences: [
        { apiVersion: API_VERSION, kind: KIND, name: scj.metadata.name, uid: scj.metadata.uid, controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: structuredClone(template.spec),
  };
}
