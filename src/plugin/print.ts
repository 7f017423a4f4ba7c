// Output the way kubectl prints it: aligned columns with upper-case headers, TYPE/NAME lines, JSON,
// YAML or a JSONPath template.
import { dump } from 'js-yaml';

import type { Output } from './args.js';
import { renderJsonPath } from './jsonpath.js';

export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd((widths[i] ?? 0) + 3))).join('').trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

export function serialize(value: unknown, format: 'json' | 'yaml'): string {
  return format === 'json' ? JSON.stringify(value, null, 2) : dump(value, { lineWidth: -1, noRefs: true }).trimEnd();
}

/**
 * The machine-readable formats, shared by every command: `value` is what -o json prints (and what a
 * JSONPath template sees), `names` the TYPE/NAME lines of -o name. Undefined for default and wide,
 * which each command lays out itself.
 */
function formatted(output: Output, value: unknown, names: () => readonly string[]): string | undefined {
  switch (output.format) {
    case 'json':
    case 'yaml':
      return serialize(value, output.format);
    case 'name':
      return names().join('\n');
    case 'jsonpath':
      return renderJsonPath(output.template, value);
    default:
      return undefined;
  }
}

/** Prints `value` in a machine-readable --output format, else what `human` lays out (default, wide). */
export function emit(out: { out(text: string): void; raw(text: string): void }, output: Output, value: unknown, names: () => readonly string[], human: () => string): void {
  const text = formatted(output, value, names);
  if (text === undefined) out.out(human());
  else if (output.format === 'jsonpath') out.raw(text);
  else out.out(text);
}
