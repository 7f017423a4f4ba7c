// Shorter descriptions for the pod template embedded in the CRD. With Kubernetes' full text the CRD
// is ~400 KB as JSON, more than the 256 KiB of annotations that client-side `kubectl apply` (and
// Argo CD's default sync) needs for its last-applied copy. Every type and validation stays; each
// description keeps its first sentence, so `kubectl explain scj.spec.jobTemplate.spec.template…`
// still says what a field is, and `kubectl explain job.spec.template…` has the rest. Pure.
import type { Schema } from './structural-schema.js';

/** A first sentence shorter than this ("Required.", "Deprecated.") takes the next one with it. */
const MIN_SENTENCE = 20;
/** Longer first sentences are cut at a word boundary. */
const MAX_DESCRIPTION = 200;
const ABBREVIATIONS = /\b(e\.g|i\.e|etc|vs|approx)\.$/i;

/** The leading sentence(s) of a Kubernetes field description, whitespace collapsed. */
export function firstSentence(text: string): string {
  const flat = (text.split(/\n\s*\n/)[0] ?? '').replace(/\s+/g, ' ').trim();
  let end = 0;
  for (const match of flat.matchAll(/[.!?](?= [A-Z`"'(]|$)/g)) {
    end = match.index + 1;
    if (!ABBREVIATIONS.test(flat.slice(0, end)) && end >= MIN_SENTENCE) break;
  }
  const sentence = end > 0 ? flat.slice(0, end) : flat;
  if (sentence.length <= MAX_DESCRIPTION) return sentence;
  const cut = sentence.slice(0, MAX_DESCRIPTION - 1);
  return `${cut.slice(0, cut.lastIndexOf(' ') > 0 ? cut.lastIndexOf(' ') : cut.length)}…`;
}

/** A copy of `schema` with every description under it (its own included) shortened. */
export function shortenDescriptions(schema: Schema): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'description' && typeof value === 'string') out.description = firstSentence(value);
    else if (key === 'properties' && isRecord(value)) out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shortenDescriptions(v as Schema)]));
    else if ((key === 'items' || key === 'additionalProperties') && isRecord(value)) out[key] = shortenDescriptions(value);
    else out[key] = value;
  }
  return out;
}

function isRecord(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
