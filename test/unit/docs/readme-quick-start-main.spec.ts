import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NEST_NEW_MAIN } from '../../fixtures/nest-new/nest-new-main.templates.js';

/*
 * The README's quick-start `main.ts` is what `nest new` writes, with `{ rawBody: true }` added and
 * nothing else (its first line only names the file, as every quick-start block does). The templates are
 * @nestjs/schematics' own (test/fixtures/nest-new/); readme-quick-start-files.spec.ts keeps the block
 * equal to test/consumers/shared/quick-start/main.ts, which the consumer matrix builds in each app.
 */
const README = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
const QUICK_START = README.slice(
  README.indexOf('## Quick start: an existing Nest app'),
  README.indexOf('\n## ', README.indexOf('## Quick start: an existing Nest app') + 1),
);
const MAIN = [...QUICK_START.matchAll(/```ts\n([\s\S]*?)```/g)]
  .map((match) => match[1]!)
  .find((block) => block.startsWith('// main.ts'))!;
const withRawBody = (template: string): string =>
  template.replace('NestFactory.create(AppModule)', 'NestFactory.create(AppModule, { rawBody: true })');

describe("README quick start: main.ts is nest new's", () => {
  it('is `nest new --type cjs` (Nest 12) with only `{ rawBody: true }` added, below its file-name line', () => {
    const [label, ...code] = MAIN.split('\n');
    expect(label).toMatch(/^\/\/ main\.ts: /);
    expect(code.join('\n')).toBe(withRawBody(NEST_NEW_MAIN['nest12-cjs']));
  });

  it('says which `nest new` it is, and how the other two templates differ from it', () => {
    const prose = QUICK_START.replace(/\s+/g, ' ');
    expect(prose).toContain('`main.ts` is what `nest new --type cjs` (Nest 12) writes, with `{ rawBody: true }` added');
    // What the page says of the others is true of the templates.
    const last = (template: string): string => template.trimEnd().split('\n').at(-1)!;
    expect(last(NEST_NEW_MAIN.nest11)).toBe('bootstrap();');
    expect(prose).toContain("Nest 11's ends with `bootstrap();`");
    expect(last(NEST_NEW_MAIN['nest12-esm'])).toBe('await bootstrap();');
    expect(NEST_NEW_MAIN['nest12-esm']).toContain("from './app.module.js'");
    expect(prose).toContain("Nest 12's default (an ES module app) with `await bootstrap();` and `'./app.module.js'`");
    for (const template of Object.values(NEST_NEW_MAIN)) {
      expect(template).toContain('const app = await NestFactory.create(AppModule);');
    }
  });

  it('gives the Fastify form outside the block', () => {
    expect(MAIN).not.toContain('Fastify');
    expect(QUICK_START).toContain('NestFactory.create(AppModule, new FastifyAdapter(), { rawBody: true })');
  });
});
