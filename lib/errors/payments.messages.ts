/** Message texts of the module's errors, kept in one file (as `@nestjs/bullmq` does). */

export const AUTHENTICATION_HINT =
  'The API key is missing, inactive, or belongs to the other environment: sandbox keys only work ' +
  'against the sandbox base address and production keys only against the production base address ' +
  '(check `environment` and `baseUrl`). A leaked key is rotated from the dashboard.';

export const PERMISSION_HINT = 'The API key may not reach this resource.';

export const RATE_LIMIT_HINT = 'The service kept answering 429 Too Many Requests after all retries.';

export const configurationMessage = (option: string, problem: string, fix: string): string =>
  `Invalid PaymentsModule option \`${option}\`: ${problem}. Fix: ${fix}`;

export const invalidArgumentMessage = (where: string, argument: string, problem: string): string =>
  `${where}: \`${argument}\` ${problem}. Nothing was sent to the payment service.`;
