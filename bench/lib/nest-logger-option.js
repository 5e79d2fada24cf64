/**
 * The `logger` option of `NestFactory.create` for a scenario: a list of levels, or 'nest-default' to
 * pass none and keep Nest's own default logger (Nest 12: every level, debug and verbose included).
 */
export function nestLoggerOption(logger) {
  return logger === 'nest-default' ? {} : { logger };
}
