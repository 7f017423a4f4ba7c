// `-o jsonpath=TEMPLATE`, kubectl's template syntax (k8s.io/client-go/util/jsonpath) for what the
// plugin prints: text with {expressions}: .field, ['field'], [n], [-n], [*], .*, filters
// [?(@.f == "x")] (==, !=, <, <=, >, >=, or bare existence), {range EXPR}…{end} and quoted literals
// {"\n"}. Like kubectl's default (--allow-missing-template-keys), a missing key prints nothing.
import { PluginError } from './errors.js';

type Segment =
  | { kind: 'field'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'all' }
  | { kind: 'filter'; path: Segment[]; op?: string; value?: string | number | boolean };

type Node = { kind: 'text'; text: string } | { kind: 'expr'; path: Segment[] } | { kind: 'range'; path: Segment[]; body: Node[] };

export function renderJsonPath(template: string, data: unknown): string {
  const nodes = parseTemplate(template);
  return render(nodes, data);
}

function fail(template: string, why: string): never {
  throw new PluginError(`error parsing jsonpath ${template}: ${why}`);
}

function parseTemplate(template: string): Node[] {
  const root: Node[] = [];
  const stack: Node[][] = [root];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    const top = stack[stack.length - 1] as Node[];
    if (open < 0) {
      top.push({ kind: 'text', text: template.slice(i) });
      break;
    }
    if (open > i) top.push({ kind: 'text', text: template.slice(i, open) });
    const close = closing(template, open, '}', template);
    const inner = template.slice(open + 1, close).trim();
    i = close + 1;
    if (inner === 'end') {
      if (stack.length === 1) fail(template, 'not in range, nothing to end');
      stack.pop();
    } else if (inner.startsWith('range ')) {
      const body: Node[] = [];
      top.push({ kind: 'range', path: parsePath(inner.slice(6).trim(), template), body });
      stack.push(body);
    } else if (/^(".*"|'.*')$/s.test(inner)) {
      top.push({ kind: 'text', text: unquote(inner) });
    } else {
      top.push({ kind: 'expr', path: parsePath(inner, template) });
    }
  }
  if (stack.length > 1) fail(template, 'unclosed range');
  return root;
}

/** The index of `close` ending the group opened at `open`, skipping quoted strings and nested [ ]. */
function closing(text: string, open: number, close: '}' | ']', template: string): number {
  let quote: string | undefined;
  let depth = 0;
  for (let j = open + 1; j < text.length; j++) {
    const c = text[j];
    if (quote) {
      if (c === '\\') j++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === close && depth === 0) return j;
    else if (c === '[') depth++;
    else if (c === ']') depth--;
  }
  return fail(template, close === '}' ? 'unclosed action' : 'unclosed [');
}

function unquote(quoted: string): string {
  const body = quoted.slice(1, -1);
  return body.replace(/\\(.)/g, (_, c: string) => ({ n: '\n', t: '\t', r: '\r' })[c] ?? c);
}

function parsePath(text: string, template: string): Segment[] {
  const segments: Segment[] = [];
  let i = text.startsWith('$') || text.startsWith('@') ? 1 : 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '.') {
      const m = /^\.([A-Za-z0-9_-]+|\*)/.exec(text.slice(i));
      if (!m) fail(template, `unexpected "${text.slice(i)}"`);
      segments.push(m[1] === '*' ? { kind: 'all' } : { kind: 'field', name: m[1] as string });
      i += m[0].length;
    } else if (c === '[') {
      const end = closing(text, i, ']', template);
      segments.push(bracket(text.slice(i + 1, end).trim(), template));
      i = end + 1;
    } else fail(template, `unexpected "${text.slice(i)}"`);
  }
  return segments;
}

function bracket(inner: string, template: string): Segment {
  if (inner === '*') return { kind: 'all' };
  if (/^-?[0-9]+$/.test(inner)) return { kind: 'index', index: Number(inner) };
  if (/^(".*"|'.*')$/s.test(inner)) return { kind: 'field', name: unquote(inner) };
  const filter = /^\?\((.*)\)$/s.exec(inner);
  if (!filter) return fail(template, `unsupported [${inner}]`);
  const m = /^(@[^=!<>\s]*)\s*(?:(==|!=|<=|>=|<|>)\s*(.+))?$/s.exec((filter[1] as string).trim());
  if (!m) return fail(template, `unsupported filter ${inner}`);
  const path = parsePath(m[1] as string, template);
  if (m[2] === undefined) return { kind: 'filter', path };
  const raw = (m[3] as string).trim();
  const value = /^(".*"|'.*')$/s.test(raw) ? unquote(raw) : raw === 'true' || raw === 'false' ? raw === 'true' : Number(raw);
  if (typeof value === 'number' && Number.isNaN(value)) fail(template, `cannot compare with ${raw}`);
  return { kind: 'filter', path, op: m[2], value };
}

function evaluate(path: readonly Segment[], start: unknown): unknown[] {
  let current: unknown[] = [start];
  for (const seg of path) {
    const next: unknown[] = [];
    for (const v of current) {
      if (seg.kind === 'field') {
        if (isRecord(v) && seg.name in v) next.push(v[seg.name]);
      } else if (seg.kind === 'index') {
        if (Array.isArray(v)) {
          const item: unknown = v[seg.index < 0 ? v.length + seg.index : seg.index];
          if (item !== undefined) next.push(item);
        }
      } else if (seg.kind === 'all') {
        if (Array.isArray(v)) next.push(...(v as unknown[]));
        else if (isRecord(v)) next.push(...Object.values(v));
      } else if (Array.isArray(v)) {
        next.push(...(v as unknown[]).filter((item) => matches(seg, item)));
      }
    }
    current = next;
  }
  return current;
}

function matches(seg: Extract<Segment, { kind: 'filter' }>, item: unknown): boolean {
  const found = evaluate(seg.path, item);
  if (seg.op === undefined) return found.length > 0;
  const [left] = found;
  if (left === undefined) return false;
  const right = seg.value;
  switch (seg.op) {
    case '==':
      return left === right;
    case '!=':
      return left !== right;
    default: {
      if (typeof left !== 'number' || typeof right !== 'number') return false;
      return seg.op === '<' ? left < right : seg.op === '<=' ? left <= right : seg.op === '>' ? left > right : left >= right;
    }
  }
}

function render(nodes: readonly Node[], current: unknown): string {
  let out = '';
  for (const node of nodes) {
    if (node.kind === 'text') out += node.text;
    else if (node.kind === 'expr') out += evaluate(node.path, current).map(text).join(' ');
    else for (const item of evaluate(node.path, current)) out += render(node.body, item);
  }
  return out;
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
