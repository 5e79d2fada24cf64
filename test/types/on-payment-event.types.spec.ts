import { beforeAll, describe, expect, it } from '@jest/globals';
import path from 'node:path';
import ts from 'typescript';

/**
 * Type-level tests: compiles fixtures under test/types/fixtures (excluded from the main tsconfig) with
 * the project's compiler options, `nestjs-payments` mapped to lib/index.ts as a consumer would see it,
 * and asserts the exact diagnostics.
 */
const root = path.resolve(process.cwd());
const fixture = (name: string): string => path.join(root, 'test/types/fixtures', name);

interface FixtureDiagnostic {
  file: string;
  line: number;
  code: number;
  message: string;
}

function compile(files: string[]): FixtureDiagnostic[] {
  const config = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const options: ts.CompilerOptions = {
    ...parsed.options,
    noEmit: true,
    paths: { 'nestjs-payments': ['./lib/index.ts'] },
  };
  const program = ts.createProgram(files, options);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((diagnostic) => diagnostic.file !== undefined)
    .map((diagnostic) => ({
      file: path.basename(diagnostic.file!.fileName),
      line: diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1,
      code: diagnostic.code,
      message: ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'),
    }));
}

const sourceLine = (file: string, text: string): number => {
  const lines = ts.sys.readFile(fixture(file))!.split('\n');
  return lines.findIndex((line) => line.includes(text)) + 1;
};

describe('@OnPaymentEvent types', () => {
  let standard: FixtureDiagnostic[];
  let merged: FixtureDiagnostic[];

  beforeAll(() => {
    standard = compile(
      [
        'misspelt-event-name',
        'invented-event-name',
        'mismatched-handler-parameter',
        'valid-handlers',
        'resource-types',
        'resource-types-invalid',
        'named-instance-handlers',
        'misspelt-event-name-named',
      ].map((name) => fixture(`${name}.fixture.ts`)),
    );
    // Declaration merging changes PaymentEventTypeMap for the whole program: compile it on its own.
    merged = compile([fixture('declaration-merging.fixture.ts')]);
  }, 120_000);

  const of = (diagnostics: FixtureDiagnostic[], file: string): FixtureDiagnostic[] =>
    diagnostics.filter((d) => d.file === file);

  it("[W11] a misspelt event name ('payment_intent.succeded') does not compile", () => {
    const file = 'misspelt-event-name.fixture.ts';
    expect(of(standard, file)).toEqual([
      {
        file,
        line: sourceLine(file, "@OnPaymentEvent('payment_intent.succeded')"),
        code: 2345,
        message: `Argument of type '"payment_intent.succeded"' is not assignable to parameter of type 'PaymentEventPattern'.`,
      },
    ]);
  });

  it("[W11] a misspelt event name does not compile with a trailing options object ({ instance: 'eu' }) either", () => {
    const file = 'misspelt-event-name-named.fixture.ts';
    expect(of(standard, file)).toEqual([
      expect.objectContaining({
        line: sourceLine(file, "@OnPaymentEvent('payment_intent.succeded', { instance: 'eu' })"),
        code: 2345,
      }),
    ]);
  });

  it('handlers bound to a named instance, and @InjectPaymentsService(name), compile cleanly', () => {
    expect(of(standard, 'named-instance-handlers.fixture.ts')).toEqual([]);
  });

  it('[W11] an undocumented event name does not compile', () => {
    const file = 'invented-event-name.fixture.ts';
    expect(of(standard, file)).toEqual([
      expect.objectContaining({ line: sourceLine(file, "@OnPaymentEvent('payment_intent.processing')"), code: 2345 }),
    ]);
  });

  it('a handler whose first parameter cannot take the subscribed events does not compile', () => {
    const file = 'mismatched-handler-parameter.fixture.ts';
    const diagnostics = of(standard, file);
    expect(diagnostics).toEqual([
      expect.objectContaining({ line: sourceLine(file, "@OnPaymentEvent('payment_intent.*')"), code: 1241 }),
    ]);
    expect(diagnostics[0]!.message).toContain('event: "setup_intent.succeeded"');
  });

  it('names, wildcards, several names and stacked decorators compile cleanly', () => {
    expect(of(standard, 'valid-handlers.fixture.ts')).toEqual([]);
  });

  it('[W11] a name added to PaymentEventTypeMap by declaration merging on nestjs-payments compiles', () => {
    expect(of(merged, 'declaration-merging.fixture.ts')).toEqual([]);
  });

  it('[S1][R1][R2][R3] the documented resources and exactly the 9 + 4 documented states compile', () => {
    expect(of(standard, 'resource-types.fixture.ts')).toEqual([]);
  });

  it.each([
    ['[S1] a payment-intent state the reference does not list', 'inventedPaymentState', 2322],
    ['[S1] a setup-intent state the reference does not list', 'inventedSetupState', 2322],
    ['[S1] a record of payment-intent states missing some', 'missingStates', 2740],
    ['[R2] a SetupIntent without id', 'setupWithoutId', 2741],
    ['[R3] a WebhookEndpoint without secret', 'endpointWithoutSecret', 2741],
    ['[R1] a PaymentIntent amount that is not a number', 'amountAsText', 2322],
  ])('%s does not compile', (_name, declaration, code) => {
    const file = 'resource-types-invalid.fixture.ts';
    const line = sourceLine(file, `export const ${declaration}`);
    expect(
      of(standard, file)
        .filter((d) => d.line === line)
        .map((d) => d.code),
    ).toEqual([code]);
  });

  it('the fixtures compile against the library itself without errors elsewhere', () => {
    expect(standard.filter((d) => !d.file.endsWith('.fixture.ts'))).toEqual([]);
  });
});
