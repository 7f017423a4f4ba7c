// The OpenAPI v3 → CRD structural schema conversion on a small document with every construct
// Kubernetes' batch/v1 document uses.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { type OpenApiDocument, SchemaError, structuralSchema } from '../../crd/structural-schema.js';

/** The node at a path of property names. */
function at(node: unknown, ...path: string[]): Record<string, unknown> {
  let n = node;
  for (const k of path) n = (n as Record<string, unknown>)[k];
  return n as Record<string, unknown>;
}

const ref = (name: string): Record<string, unknown> => ({ $ref: `#/components/schemas/${name}` });

const doc: OpenApiDocument = {
  components: {
    schemas: {
      Spec: {
        type: 'object',
        description: 'Spec of a thing.',
        required: ['containers'],
        properties: {
          containers: { type: 'array', items: { allOf: [ref('Container')], default: {} }, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], 'x-kubernetes-patch-strategy': 'merge' },
          port: { allOf: [ref('io.k8s.apimachinery.pkg.util.intstr.IntOrString')], description: 'The port.' },
          limits: { type: 'object', additionalProperties: { allOf: [ref('io.k8s.apimachinery.pkg.api.resource.Quantity')], default: {} } },
          fields: ref('FieldsV1'),
          labels: { type: 'object', additionalProperties: { type: 'string', default: '' } },
          when: { type: 'string', format: 'date-time' },
          odd: { type: 'string', format: 'int-or-string' },
          weird: { type: 'string', format: 'not-a-crd-format', uniqueItems: true },
        },
      },
      Container: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string', default: '' },
          ports: { type: 'array', items: ref('Port'), 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['containerPort', 'protocol'] },
        },
      },
      Port: { type: 'object', required: ['containerPort'], properties: { containerPort: { type: 'integer', format: 'int32' }, protocol: { type: 'string', default: 'TCP', enum: ['TCP', 'UDP'] } } },
      'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { type: 'string', format: 'int-or-string', description: 'Int or string.' },
      'io.k8s.apimachinery.pkg.api.resource.Quantity': { oneOf: [{ type: 'string' }, { type: 'number' }], description: 'A quantity.' },
      FieldsV1: { type: 'object', description: 'Free form.' },
      Loop: { type: 'object', properties: { next: ref('Loop') } },
    },
  },
};

test('refs inlined, descriptions kept (the field\'s own wins), only CRD-legal keywords', () => {
  const s = structuralSchema(doc, 'Spec');
  const p = (...path: string[]): Record<string, unknown> => at(s, 'properties', ...path);
  assert.equal(s.description, 'Spec of a thing.');
  assert.deepEqual(s.required, ['containers']);
  assert.equal(JSON.stringify(s).includes('$ref'), false);
  assert.equal(JSON.stringify(s).includes('x-kubernetes-patch'), false);
  assert.deepEqual(p('port'), { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }], description: 'The port.' });
  assert.equal(p('limits', 'additionalProperties')['x-kubernetes-int-or-string'], true);
  assert.match(String(p('limits', 'additionalProperties').pattern), /KMGTPE/);
  assert.deepEqual(p('fields'), { type: 'object', description: 'Free form.', 'x-kubernetes-preserve-unknown-fields': true });
  assert.deepEqual(p('labels'), { type: 'object', additionalProperties: { type: 'string' } }, 'defaults dropped');
  assert.deepEqual(p('when'), { type: 'string', format: 'date-time' });
  assert.equal(p('odd')['x-kubernetes-int-or-string'], true);
  assert.deepEqual(p('weird'), { type: 'string' });
});

test('list-map keys: required ones stay as they are, the others keep Kubernetes\' default', () => {
  const containers = at(structuralSchema(doc, 'Spec'), 'properties', 'containers');
  assert.equal(containers['x-kubernetes-list-type'], 'map');
  assert.deepEqual(containers['x-kubernetes-list-map-keys'], ['name']);
  assert.deepEqual(at(containers, 'items', 'properties', 'name'), { type: 'string' });
  const port = at(containers, 'items', 'properties', 'ports', 'items', 'properties');
  assert.deepEqual(port.protocol, { type: 'string', enum: ['TCP', 'UDP'], default: 'TCP' });
  assert.equal(at(port, 'containerPort').default, undefined);
});

test('what a CRD cannot express is an error, not a silently wrong schema', () => {
  assert.throws(() => structuralSchema(doc, 'Loop'), (e: unknown) => e instanceof SchemaError && /recursive type Loop → Loop/.test(e.message));
  assert.throws(() => structuralSchema(doc, 'Missing'), SchemaError);
  const untyped: OpenApiDocument = { components: { schemas: { A: { type: 'object', properties: { x: { oneOf: [{ type: 'string' }, { type: 'boolean' }] } } } } } };
  assert.throws(() => structuralSchema(untyped, 'A'), /without a type/);
});
