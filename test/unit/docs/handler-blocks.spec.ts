import { beforeAll, describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/*
 * Every handler the docs show compiles as written under `strict` (issue 32, item 6). The ```ts blocks of
 * README.md and docs/*.md that decorate a method with `@OnPaymentEvent(` are read from the pages and
 * type-checked with the compiler API against lib/, with the options a `nest new` app has
 * (isolatedModules, emitDecoratorMetadata, experimentalDecorators, module nodenext) plus `strict`.
 *
 * What the test adds to a block, and nothing else:
 *  1. `from 'nestjs-payments'` (and `'nestjs-payments/<entry>'`) resolve to this checkout's lib/;
 *  2. a block with no import line is a fragment: it gets the imports of the names it uses, `Injectable`
 *     from '@nestjs/common' and any root export of 'nestjs-payments' (`OnPaymentEvent`, `PaymentEvent`,
 *     `PaymentEventContext`, ...), each in a plain `import { Name }`, as a user writes it;
 *  3. a block with no `class` is a fragment of methods: it is put in `@Injectable() class DocHandlers {}`.
 * Anything else a block needs (another import, a declaration, a `!`) must be on the page.
 */
const root = process.cwd();
const PAGES = [
  'README.md',
  ...readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];
const HANDLER = /^\s*@OnPaymentEvent\(/m;

interface Block {
  /** `docs/webhooks.md:109`: the page and the line of its opening fence. */
  where: string;
  code: string;
}

function handlerBlocks(): Block[] {
  const blocks: Block[] = [];
  for (const page of PAGES) {
    const text = readFileSync(path.join(root, page), 'utf8');
    for (const match of text.matchAll(/^( *)```ts\n([\s\S]*?)^\1```/gm)) {
      const indent = match[1]!;
      const code = match[2]!.replace(new RegExp(`^${indent}`, 'gm'), '');
      if (!HANDLER.test(code)) continue;
      blocks.push({ where: `${page}:${text.slice(0, match.index).split('\n').length}`, code });
    }
  }
  return blocks;
}

/** The root exports of lib/index.ts, values and types (what rule 2 may import). */
function rootExports(): Set<string> {
  const program = ts.createProgram([path.join(root, 'lib/index.ts')], { noEmit: true, skipLibCheck: true });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(path.join(root, 'lib/index.ts'))!)!;
  return new Set(checker.getExportsOfModule(module).map((symbol) => symbol.name));
}

/** The block as compiled: rules 2 and 3 of the header applied. */
function wrap(code: string, exported: Set<string>): string {
  let body = code;
  if (!/^\s*class\s|\sclass\s+\w+/m.test(body)) {
    body = `@Injectable()\nexport class DocHandlers {\n${body}\n}\n`;
  }
  if (/^import\s/m.test(code)) return body;
  const used = new Set(body.match(/\b[A-Za-z_$][\w$]*\b/g) ?? []);
  const fromRoot = [...exported].filter((name) => used.has(name)).sort();
  const prelude = [
    used.has('Injectable') ? "import { Injectable } from '@nestjs/common';" : '',
    fromRoot.length > 0 ? `import { ${fromRoot.join(', ')} } from 'nestjs-payments';` : '',
  ].filter(Boolean);
  return `${prelude.join('\n')}\n${body}`;
}

const OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  isolatedModules: true,
  emitDecoratorMetadata: true,
  experimentalDecorators: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2023,
  skipLibCheck: true,
  // A block that is a whole spec file (docs/testing.md) uses the runner's globals, as `nest new` sets them up.
  types: ['node', 'jest'],
  paths: {
    'nestjs-payments': [path.join(root, 'lib/index.ts')],
    'nestjs-payments/*': [path.join(root, 'lib/*/index.ts')],
  },
};

/** Type-checks each source (a virtual file in the repository root) and returns its diagnostics. */
function typeCheck(sources: Map<string, string>): Map<string, string[]> {
  const files = new Map([...sources].map(([name, text]) => [path.join(root, `doc-block-${name}.ts`), text]));
  const host = ts.createCompilerHost(OPTIONS);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, language, onError, create) => {
    const text = files.get(path.resolve(fileName));
    return text === undefined
      ? getSourceFile(fileName, language, onError, create)
      : ts.createSourceFile(fileName, text, language, true);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (fileName) => files.has(path.resolve(fileName)) || fileExists(fileName);
  const readFile = host.readFile.bind(host);
  host.readFile = (fileName) => files.get(path.resolve(fileName)) ?? readFile(fileName);
  const program = ts.createProgram([...files.keys()], OPTIONS, host);
  const result = new Map<string, string[]>();
  for (const [name] of sources) {
    const file = program.getSourceFile(path.join(root, `doc-block-${name}.ts`))!;
    result.set(
      name,
      ts.getPreEmitDiagnostics(program, file).map((diagnostic) => {
        const line = diagnostic.start === undefined ? 0 : file.getLineAndCharacterOfPosition(diagnostic.start).line + 1;
        return `line ${line}: TS${diagnostic.code} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
      }),
    );
  }
  return result;
}

describe('handler code blocks of README.md and docs/*.md compile as written under strict', () => {
  const blocks = handlerBlocks();
  let diagnostics: Map<string, string[]>;

  /** Reads `event.data.payment_intent.id` without a check: must fail (TS18048), or the test proves nothing. */
  const UNSAFE = `@OnPaymentEvent('payment_intent.succeeded')
async paid(event: PaymentEvent<'payment_intent.succeeded'>) {
  return event.data.payment_intent.id;
}
`;
  /** A type-only name imported plainly in a decorated signature: TS1272 under isolatedModules. */
  const TYPE_ONLY = `import { Injectable } from '@nestjs/common';
import { OnPaymentEvent, PaymentIntent } from 'nestjs-payments';

@Injectable()
export class Payments {
  @OnPaymentEvent('payment_intent.succeeded')
  async paid(_event: unknown, _ctx: unknown, intent?: PaymentIntent) {
    return intent?.id;
  }
}
`;

  beforeAll(() => {
    const exported = rootExports();
    const sources = new Map(blocks.map((block, index) => [String(index), wrap(block.code, exported)]));
    sources.set('unsafe', wrap(UNSAFE, exported));
    sources.set('type-only', wrap(TYPE_ONLY, exported));
    diagnostics = typeCheck(sources);
  }, 180_000);

  it('finds the handler blocks (README quick start, webhooks.md, exactly-once.md, named-instances.md)', () => {
    const pages = new Set(blocks.map((block) => block.where.replace(/:\d+$/, '')));
    expect([...pages]).toEqual(
      expect.arrayContaining(['README.md', 'docs/webhooks.md', 'docs/exactly-once.md', 'docs/named-instances.md']),
    );
  });

  it('fails on a block that does not compile: event.data.payment_intent.id unchecked (TS18048)', () => {
    expect(diagnostics.get('unsafe')).toEqual([
      expect.stringMatching(/TS18048 'event\.data\.payment_intent' is possibly 'undefined'/),
    ]);
  });

  it('fails on a type-only name imported plainly in a decorated signature (TS1272), as nest build would', () => {
    expect(diagnostics.get('type-only')).toEqual([expect.stringContaining('TS1272')]);
  });

  it.each(blocks.map((block, index) => [block.where, index] as const))('%s', (_where, index) => {
    expect(diagnostics.get(String(index))).toEqual([]);
  });
});
