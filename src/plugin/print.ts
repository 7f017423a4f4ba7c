// Output the way kubectl prints it: aligned columns with upper-case headers, or JSON / YAML.
import { dump } from 'js-yaml';

export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd((widths[i] ?? 0) + 3))).join('').trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

export function serialize(value: unknown, format: 'json' | 'yaml'): string {
  return format === 'json' ? JSON.stringify(value, null, 2) : dump(value, { lineWidth: -1, noRefs: true }).trimEnd();
}
