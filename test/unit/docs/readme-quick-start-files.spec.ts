import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/*
 * The README's quick start is test/consumers/shared/quick-start/, verbatim (issue 32, item 1): each file
 * there is one ```ts block of the README, first line (`// fulfilment.ts: ...`) included. The consumer
 * matrix copies those files into a `nest new` app of each shape, where `nest build` (the app's own
 * tsconfig: isolatedModules, emitDecoratorMetadata), its generated tests and the handler test must
 * pass; so what a user pastes from the README is what those apps build.
 */
const README = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
const FOLDER = join(process.cwd(), 'test/consumers/shared/quick-start');
const QUICK_START = README.slice(
  README.indexOf('## Quick start: an existing Nest app'),
  README.indexOf('\n## ', README.indexOf('## Quick start: an existing Nest app') + 1),
);
const BLOCKS = [...QUICK_START.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
const FILES = readdirSync(FOLDER).sort();

describe('README quick start = test/consumers/shared/quick-start/', () => {
  it('has one block per file, and no other block', () => {
    expect(FILES.length).toBeGreaterThanOrEqual(4);
    expect(BLOCKS.map((block) => /^\/\/ (\S+\.ts)/.exec(block)?.[1]).sort()).toEqual(FILES);
  });

  it.each(FILES)('%s is the README block that starts with its name, verbatim', (file) => {
    const block = BLOCKS.find((text) => text.startsWith(`// ${file}`));
    expect(block).toBe(readFileSync(join(FOLDER, file), 'utf8'));
  });

  it('imports PaymentEvent plainly, as a user writes it (it must build under isolatedModules)', () => {
    expect(readFileSync(join(FOLDER, 'fulfilment.ts'), 'utf8')).toContain(
      "import { OnPaymentEvent, PaymentEvent } from 'nestjs-payments';",
    );
  });
});
