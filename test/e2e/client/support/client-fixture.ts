import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { PaymentsModule, PaymentsService, type PaymentsModuleOptions } from '../../../../lib/index.js';
import { FakeRuntime } from './fake-runtime.js';

/** A key string distinctive enough that finding it anywhere means it leaked. */
export const TEST_API_KEY = 'sk_test_LEAKCANARY_7f3a9c1e5b2d4068';

export const INTENT_ID = '3f1c2a9e-8b7d-4c6e-9a5f-1b2c3d4e5f60';

/** Boots `PaymentsModule.forRoot` against `baseUrl` with a fake runtime, and returns the service. */
export async function bootClient(
  baseUrl: string,
  overrides: Partial<PaymentsModuleOptions> = {},
): Promise<{ payments: PaymentsService; runtime: FakeRuntime; close: () => Promise<void> }> {
  const runtime = new FakeRuntime();
  const moduleRef = await Test.createTestingModule({
    imports: [
      PaymentsModule.forRoot({
        apiKey: TEST_API_KEY,
        environment: 'sandbox',
        baseUrl,
        allowInsecureHttp: true,
        webhooks: false,
        runtime,
        ...overrides,
      }),
    ],
  }).compile();
  return { payments: moduleRef.get(PaymentsService), runtime, close: () => moduleRef.close() };
}
