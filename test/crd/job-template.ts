// The SecondCronJob CRD's spec.jobTemplate: Kubernetes' own batch/v1 JobTemplateSpec schema, made
// structural, plus the few rules a Job adds on top of a plain pod template (checked by the Job API's
// validation, which the CRD schema should not leave to a failed create at the first slot).
import { shortenDescriptions } from './short-descriptions.js';
import { type OpenApiDocument, type Schema, SchemaError, structuralSchema } from './structural-schema.js';

export const JOB_TEMPLATE_TYPE = 'io.k8s.api.batch.v1.JobTemplateSpec';

/** Where the template sits in the CRD. */
export const JOB_TEMPLATE_PATH = ['spec', 'versions', 0, 'schema', 'openAPIV3Schema', 'properties', 'spec', 'properties', 'jobTemplate'] as const;

/** Said once, at the top of the shortened part (see short-descriptions.ts). */
const POD_TEMPLATE_NOTE = "Descriptions inside the pod template are Kubernetes' first sentences; `kubectl explain job.spec.template` has the full text.";

export function jobTemplateSchema(doc: OpenApiDocument): Schema {
  const template = structuralSchema(doc, JOB_TEMPLATE_TYPE);
  template.description = 'The Job to create at each slot: a batch/v1 JobTemplateSpec, exactly as in a CronJob.';
  template.required = ['spec'];
  const jobSpec = child(template, 'spec');
  addRequired(jobSpec, 'template');
  const podTemplate = shortenDescriptions(child(jobSpec, 'template'));
  podTemplate.description = `${String(podTemplate.description ?? '')} ${POD_TEMPLATE_NOTE}`.trim();
  (jobSpec.properties as Record<string, Schema>).template = podTemplate;
  addRequired(podTemplate, 'spec');
  const podSpec = child(podTemplate, 'spec');
  addRequired(podSpec, 'containers', 'restartPolicy');
  const restartPolicy = child(podSpec, 'restartPolicy');
  restartPolicy.enum = ['Never', 'OnFailure'];
  restartPolicy.description = `A Job's pods must use Never or OnFailure. ${String(restartPolicy.description ?? '')}`.trim();
  const containers = child(podSpec, 'containers');
  containers.minItems = 1;
  addRequired(containers.items as Schema, 'name', 'image');
  return template;
}

function child(schema: Schema, name: string): Schema {
  const props = schema.properties as Record<string, Schema> | undefined;
  const found = props?.[name];
  if (!found) throw new SchemaError(`the JobTemplateSpec schema has no field ${name} where expected`);
  return found;
}

function addRequired(schema: Schema, ...names: string[]): void {
  const required = new Set((schema.required as string[] | undefined) ?? []);
  for (const n of names) required.add(n);
  schema.required = [...required];
}

/** The CRD with its jobTemplate replaced (everything else is hand-written and kept). */
export function withJobTemplate(crd: Schema, template: Schema): Schema {
  const copy = structuredClone(crd);
  let node: unknown = copy;
  for (const step of JOB_TEMPLATE_PATH.slice(0, -1)) {
    node = (node as Record<string | number, unknown>)[step];
    if (!node || typeof node !== 'object') throw new SchemaError(`the CRD has no ${JOB_TEMPLATE_PATH.join('.')}`);
  }
  (node as Record<string, unknown>).jobTemplate = template;
  return copy;
}

export function jobTemplateOf(crd: Schema): unknown {
  let node: unknown = crd;
  for (const step of JOB_TEMPLATE_PATH) node = (node as Record<string | number, unknown> | undefined)?.[step];
  return node;
}
