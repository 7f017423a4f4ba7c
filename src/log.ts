// Structured JSON logs, one object per line on stderr (what log collectors expect from a container).
import type { LogLevel } from './config.js';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

export interface LoggerOptions {
  level: LogLevel;
  write?: (line: string) => void;
  now?: () => number;
}

export function createLogger(opts: LoggerOptions, base: LogFields = {}): Logger {
  const write = opts.write ?? ((line: string) => process.stderr.write(line + '\n'));
  const now = opts.now ?? Date.now;
  const min = ORDER[opts.level];
  const emit = (level: LogLevel, msg: string, fields?: LogFields): void => {
    if (ORDER[level] < min) return;
    write(JSON.stringify({ time: new Date(now()).toISOString(), level, msg, ...base, ...errorsToText(fields) }));
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger(opts, { ...base, ...fields }),
  };
}

// Error objects serialize to {} in JSON; keep their message instead.
function errorsToText(fields: LogFields | undefined): LogFields | undefined {
  if (!fields) return fields;
  const out: LogFields = {};
  for (const [k, v] of Object.entries(fields)) out[k] = v instanceof Error ? v.message : v;
  return out;
}

export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => silentLogger,
};
