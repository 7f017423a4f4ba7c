// Kubernetes' published OpenAPI v3 → a structural schema that a CRD may carry (no $ref, every node
// typed, only the extensions apiextensions.k8s.io/v1 accepts), with the descriptions kept so that
// `kubectl explain` documents the fields. Pure: the caller fetches the document.
//
// The rules applied, each one a constraint of CRD schemas:
//  - $ref and single-entry allOf are inlined; the referring field's own description wins;
//  - IntOrString and Quantity become `x-kubernetes-int-or-string: true` with anyOf integer/string (as
//    controller-gen emits them; Quantity keeps its pattern);
//  - an object without properties or additionalProperties is free-form in Kubernetes (FieldsV1):
//    `x-kubernetes-preserve-unknown-fields: true`;
//  - `default` is dropped (native defaulting happens when the Job is created, not in our resource),
//    except on list-map keys that are not required: a CRD needs those to have a default;
//  - unknown formats, uniqueItems, x-kubernetes-patch-*, x-kubernetes-unions and the like are dropped.

export type Schema = { [key: string]: unknown };

export interface OpenApiDocument {
  components?: { schemas?: Record<string, Schema> };
}

const REF_PREFIX = '#/components/schemas/';
const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
/** controller-gen's pattern for resource.Quantity. */
const QUANTITY_PATTERN = '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

/** Formats apiextensions-apiserver knows; any other would be rejected or ignored. */
const CRD_FORMATS = new Set([
  'bsonobjectid', 'uri', 'email', 'hostname', 'ipv4', 'ipv6', 'cidr', 'mac', 'uuid', 'uuid3', 'uuid4', 'uuid5', 'isbn', 'isbn10',
  'isbn13', 'creditcard', 'ssn', 'hexcolor', 'rgbcolor', 'byte', 'password', 'date', 'duration', 'datetime', 'date-time', 'int32',
  'int64', 'float', 'double',
]);
/** Scalar keywords copied as they are. */
const COPIED = ['type', 'description', 'enum', 'nullable', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'pattern', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'x-kubernetes-list-type', 'x-kubernetes-map-type'] as const;

export class SchemaError extends Error {}

export function structuralSchema(doc: OpenApiDocument, typeName: string): Schema {
  const schemas = doc.components?.schemas ?? {};
  if (!schemas[typeName]) throw new SchemaError(`${typeName} is not in the OpenAPI document`);
  return new Converter(schemas).named(typeName, []);
}

class Converter {
  constructor(private readonly schemas: Record<string, Schema>) {}

  named(name: string, stack: readonly string[]): Schema {
    if (stack.includes(name)) throw new SchemaError(`recursive type ${[...stack, name].join(' → ')}: a CRD schema cannot express it`);
    if (name === INT_OR_STRING) return intOrString(this.schemas[name]);
    if (name === QUANTITY) return { ...intOrString(this.schemas[name]), pattern: QUANTITY_PATTERN };
    const target = this.schemas[name];
    if (!target) throw new SchemaError(`unresolved $ref ${name}`);
    return this.node(target, [...stack, name]);
  }

  node(source: Schema, stack: readonly string[]): Schema {
    const ref = refOf(source);
    if (ref !== undefined) {
      const resolved = this.named(ref, stack);
      return typeof source.description === 'string' ? { ...resolved, description: source.description } : resolved;
    }
    if (source.format === 'int-or-string') return intOrString(source);

    const out: Schema = {};
    for (const key of COPIED) if (source[key] !== undefined) out[key] = source[key];
    if (typeof source.format === 'string' && CRD_FORMATS.has(source.format)) out.format = source.format;
    if (Array.isArray(source.required) && source.required.length > 0) out.required = [...(source.required as string[])];

    const properties = asRecord(source.properties);
    if (properties) {
      out.type ??= 'object';
      out.properties = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, this.node(v, stack)]));
    }
    const additional = source.additionalProperties;
    if (additional === true) out['x-kubernetes-preserve-unknown-fields'] = true;
    else if (asRecord(additional)) out.additionalProperties = this.node(additional as Schema, stack);
    if (asRecord(source.items)) {
      out.type ??= 'array';
      out.items = this.node(source.items as Schema, stack);
      this.defaultListMapKeys(source, out);
    }
    if (out.type === 'object' && !out.properties && !out.additionalProperties) out['x-kubernetes-preserve-unknown-fields'] = true;
    if (out.type === undefined && !out['x-kubernetes-preserve-unknown-fields']) {
      throw new SchemaError(`a schema node without a type: ${JSON.stringify(source).slice(0, 200)}`);
    }
    return out;
  }

  /** Keys of a map-type list must be required or defaulted: keep Kubernetes' defaults for those. */
  private defaultListMapKeys(source: Schema, out: Schema): void {
    const keys = source['x-kubernetes-list-map-keys'];
    if (!Array.isArray(keys)) return;
    out['x-kubernetes-list-map-keys'] = [...(keys as string[])];
    const items = out.items as Schema;
    const required = new Set((items.required as string[] | undefined) ?? []);
    const sourceItem = this.resolve(source.items as Schema);
    const sourceProps = asRecord(sourceItem.properties) ?? {};
    const props = asRecord(items.properties) ?? {};
    for (const key of keys as string[]) {
      if (required.has(key)) continue;
      const def = sourceProps[key]?.default;
      if (def === undefined) throw new SchemaError(`list-map key ${key} is neither required nor defaulted`);
      props[key] = { ...props[key], default: def };
    }
  }

  private resolve(source: Schema): Schema {
    const ref = refOf(source);
    return ref === undefined ? source : this.resolve(this.schemas[ref] ?? {});
  }
}

function intOrString(source: Schema | undefined): Schema {
  const out: Schema = { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] };
  if (typeof source?.description === 'string') out.description = source.description;
  return out;
}

/** `$ref: X`, or Kubernetes' `allOf: [{$ref: X}]` wrapping (used to attach a description and default). */
function refOf(source: Schema): string | undefined {
  let ref = source.$ref;
  if (ref === undefined && Array.isArray(source.allOf) && source.allOf.length === 1) ref = (source.allOf[0] as Schema).$ref;
  if (ref === undefined) return undefined;
  if (typeof ref !== 'string' || !ref.startsWith(REF_PREFIX)) throw new SchemaError(`unsupported $ref ${String(ref)}`);
  return ref.slice(REF_PREFIX.length);
}

function asRecord(value: unknown): Record<string, Schema> | undefined {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, Schema>) : undefined;
}
