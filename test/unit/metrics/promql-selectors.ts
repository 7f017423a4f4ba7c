// A small PromQL scanner that finds the series selectors and range windows in an expression, so
// tests can check dashboard and alert queries against the operator's real metric registry. It is
// not a parser: it only has to tell metric names apart from functions, keywords, label lists of
// `by (...)`/`on (...)`, strings and durations — enough for the queries we write.

export interface Selector {
  metric: string;
  /** The text between the braces (label matchers), '' when the selector has none. */
  matchers: string;
}

export interface ScanResult {
  selectors: Selector[];
  /** Contents of every `[...]` range or subquery window, e.g. '$__rate_interval' or '5m'. */
  ranges: string[];
}

// Followed by a parenthesised list of label names, not of expressions.
const LABEL_LIST_KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const OPERATOR_KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'atan2', 'inf', 'nan']);

const IDENT_START = /[A-Za-z_:]/;
const IDENT_PART = /[A-Za-z0-9_:]/;

export function scanPromQL(expr: string): ScanResult {
  const selectors: Selector[] = [];
  const ranges: string[] = [];
  let i = 0;

  const skipSpace = (from: number): number => {
    let j = from;
    while (j < expr.length && /\s/.test(expr[j] as string)) j++;
    return j;
  };
  const skipString = (from: number): number => {
    const quote = expr[from];
    let j = from + 1;
    while (j < expr.length && expr[j] !== quote) j += expr[j] === '\\' && quote !== '`' ? 2 : 1;
    if (j >= expr.length) throw new Error(`unterminated string in: ${expr}`);
    return j + 1;
  };
  /** Index just after the bracket that closes the one at `from`, skipping strings inside. */
  const skipGroup = (from: number, open: string, close: string): number => {
    let depth = 0;
    let j = from;
    while (j < expr.length) {
      const c = expr[j] as string;
      if (c === '"' || c === "'" || c === '`') {
        j = skipString(j);
        continue;
      }
      if (c === open) depth++;
      else if (c === close && --depth === 0) return j + 1;
      j++;
    }
    throw new Error(`unbalanced ${open}${close} in: ${expr}`);
  };

  while (i < expr.length) {
    const c = expr[i] as string;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '#') {
      while (i < expr.length && expr[i] !== '\n') i++;
    } else if (c === '"' || c === "'" || c === '`') {
      i = skipString(i);
    } else if (c === '{') {
      // A selector without a metric name, e.g. {__name__=~"..."}: keep it visible to callers.
      const end = skipGroup(i, '{', '}');
      selectors.push({ metric: '', matchers: expr.slice(i + 1, end - 1).trim() });
      i = end;
    } else if (c === '[') {
      const end = skipGroup(i, '[', ']');
      ranges.push(expr.slice(i + 1, end - 1).trim());
      i = end;
    } else if (c === '$') {
      // A dashboard variable ($job, ${job}, $__rate_interval) outside a string or window.
      i++;
      if (expr[i] === '{') i = skipGroup(i, '{', '}');
      else while (i < expr.length && IDENT_PART.test(expr[i] as string)) i++;
    } else if (/[0-9.]/.test(c)) {
      // Numbers and durations: 0.99, 1e-9, 5m, 1h30m, 0x1F.
      while (i < expr.length && /[0-9A-Za-z.]/.test(expr[i] as string)) {
        const prev = expr[i];
        i++;
        if ((prev === 'e' || prev === 'E') && (expr[i] === '-' || expr[i] === '+')) i++;
      }
    } else if (IDENT_START.test(c)) {
      let end = i + 1;
      while (end < expr.length && IDENT_PART.test(expr[end] as string)) end++;
      const word = expr.slice(i, end);
      const next = skipSpace(end);
      const lower = word.toLowerCase();
      if (LABEL_LIST_KEYWORDS.has(lower)) {
        i = expr[next] === '(' ? skipGroup(next, '(', ')') : end;
      } else if (OPERATOR_KEYWORDS.has(lower)) {
        i = end;
      } else if (expr[next] === '(' || /^(by|without)\b/i.test(expr.slice(next))) {
        // A function or aggregation (`sum by (le) (...)` puts the grouping first); its
        // arguments are scanned as they come.
        i = end;
      } else if (expr[next] === '{') {
        const close = skipGroup(next, '{', '}');
        selectors.push({ metric: word, matchers: expr.slice(next + 1, close - 1).trim() });
        i = close;
      } else {
        selectors.push({ metric: word, matchers: '' });
        i = end;
      }
    } else {
      i++;
    }
  }
  return { selectors, ranges };
}

/** The distinct metric names an expression reads. */
export function metricNames(expr: string): string[] {
  return [...new Set(scanPromQL(expr).selectors.map((s) => s.metric).filter((m) => m !== ''))];
}
