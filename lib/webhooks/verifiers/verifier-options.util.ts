import { PaymentsConfigurationError } from '../../errors/index.js';

/**
 * Normalises `secrets` (a string or an array, for rotation) into a non-empty list of non-empty
 * strings. The error names the option and the fix and never echoes a secret.
 */
export function normaliseSecrets(option: string, secrets: unknown): string[] {
  const list: unknown[] = Array.isArray(secrets) ? secrets : [secrets];
  if (list.length === 0) {
    throw new PaymentsConfigurationError(
      option,
      'is an empty array',
      'pass at least one webhook secret (a string, or an array of strings while rotating)',
    );
  }
  list.forEach((secret, index) => {
    if (typeof secret !== 'string' || secret.trim() === '') {
      const where = Array.isArray(secrets) ? `${option}[${index}]` : option;
      throw new PaymentsConfigurationError(
        where,
        'is missing or empty',
        'pass the webhook endpoint secret the service gave you (e.g. from an environment variable)',
      );
    }
    // A trailing newline from an env file or a secret mount makes every signature fail, like a forgery.
    if (/^\s|\s$|[\u0000-\u001f\u007f]/.test(secret)) {
      const where = Array.isArray(secrets) ? `${option}[${index}]` : option;
      throw new PaymentsConfigurationError(
        where,
        'starts or ends with whitespace, or contains a control character (often a trailing newline from an env file or a secret mount)',
        "trim the value before passing it, e.g. `config.getOrThrow<string>('PAYMENTS_WEBHOOK_SECRET').trim()`",
      );
    }
  });
  return list as string[];
}
