/**
 * JSON-lines logger. Callers pass identifiers and counts, never request bodies or rows: nothing secret
 * (keys, webhook secrets, vault references) is handed to it, so nothing secret can be written.
 */
import { logFieldsOf } from './tracing/context.ts';

type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level | 'silent', number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export function createLogger(
  base: Record<string, unknown>,
  level: Level | 'silent' = 'info',
  write: (line: string) => void = (line) => process.stdout.write(line + '\n'),
): Logger {
  const threshold = ORDER[level];
  const emit = (lvl: Level, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < threshold) return;
    // The active span's ids (none while tracing is off); a logger made for a request or message names its own.
    const trace = logFieldsOf();
    write(
      JSON.stringify({ level: lvl, time: new Date().toISOString(), ...trace, ...base, msg, ...fields }, errorReplacer),
    );
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger({ ...base, ...fields }, level, write),
  };
}

/**
 * An error as its name, message, stack and cause (itself an error, serialised the same way): never its other
 * fields, where drivers keep a failed query's parameters.
 */
function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    return {
      name: value.name,
      message: value.message,
      stack: value.stack,
      ...(value.cause === undefined ? {} : { cause: value.cause }),
    };
  }
  return value;
}
