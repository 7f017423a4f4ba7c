// The pod template's descriptions cut to their first sentence, every other keyword untouched; and the
// committed CRD small enough for client-side `kubectl apply`.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { repoRoot } from '../../cluster/repo-root.js';
import { LAST_APPLIED_LIMIT, crdPath, readCrd } from '../../crd/crd-file.js';
import { firstSentence, shortenDescriptions } from '../../crd/short-descriptions.js';

test('firstSentence: the first sentence of the first paragraph, whitespace collapsed', () => {
  assert.equal(firstSentence('List of containers belonging to the pod. Containers cannot currently be added or removed.\n\nMore.'), 'List of containers belonging to the pod.');
  assert.equal(firstSentence('Container image name.\nMore info: https://kubernetes.io/docs/concepts/containers/images'), 'Container image name.');
  assert.equal(firstSentence('A  port\n  number'), 'A port number');
  assert.equal(firstSentence('First paragraph without a full stop\n\nSecond paragraph.'), 'First paragraph without a full stop');
});

test('firstSentence: abbreviations and very short sentences do not end it', () => {
  assert.equal(firstSentence('Describes pod affinity scheduling rules (e.g. co-locate this pod in the same node, zone, etc. as some other pod(s)). More.'),
    'Describes pod affinity scheduling rules (e.g. co-locate this pod in the same node, zone, etc. as some other pod(s)).');
  assert.equal(firstSentence('Required. Name of the referent. More.'), 'Required. Name of the referent.');
  assert.equal(firstSentence('Version 1.2 of the thing, here. Next.'), 'Version 1.2 of the thing, here.');
});

test('firstSentence: a first sentence over 200 characters is cut at a word with an ellipsis', () => {
  const long = `${'word '.repeat(60)}end. Next.`;
  const cut = firstSentence(long);
  assert.ok(cut.length <= 200, `${cut.length} characters`);
  assert.match(cut, /^word( word)*…$/);
});

test('shortenDescriptions: every description under the node, nothing else', () => {
  const schema = {
    type: 'object',
    description: 'The pod of each Job. Long text.',
    required: ['containers'],
    properties: {
      containers: {
        type: 'array',
        description: 'Containers of the pod. More.',
        minItems: 1,
        items: { type: 'object', properties: { description: { type: 'string', description: 'A field named description. Yes.' } } },
      },
      labels: { type: 'object', additionalProperties: { type: 'string', description: 'Value of the label here. More.' } },
      port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }], description: 'Port number or its name. More.' },
    },
  };
  assert.deepEqual(shortenDescriptions(schema), {
    type: 'object',
    description: 'The pod of each Job.',
    required: ['containers'],
    properties: {
      containers: {
        type: 'array',
        description: 'Containers of the pod.',
        minItems: 1,
        items: { type: 'object', properties: { description: { type: 'string', description: 'A field named description.' } } },
      },
      labels: { type: 'object', additionalProperties: { type: 'string', description: 'Value of the label here.' } },
      port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }], description: 'Port number or its name.' },
    },
  });
});

test('the committed CRD fits the last-applied annotation of client-side kubectl apply', () => {
  const { crd } = readCrd(crdPath(repoRoot()));
  const json = Buffer.byteLength(JSON.stringify(crd));
  assert.ok(json < LAST_APPLIED_LIMIT, `${json} bytes as JSON, limit ${LAST_APPLIED_LIMIT}`);
});
