import type { INestApplication, LoggerService } from '@nestjs/common';
import { Test, type TestingModuleBuilder } from '@nestjs/testing';
import * as net from 'node:net';
import type { PaymentsSimulator, PaymentsSimulatorOptions } from '../../../lib/testing/index.js';
import { SampleAppModule } from '../../../sample/sample-app.module.js';
import { listenAndRegister, startEmbeddedSimulator } from '../../../sample/sample.bootstrap.js';
import type { RegisteredWebhookEndpoint } from '../../../sample/webhooks/webhook-endpoint.registrar.js';

/** The simulator and the sample app, running in this process on free ports, as `npm run sample` runs them. */
export interface SampleStack {
  app: INestApplication;
  simulator: PaymentsSimulator;
  /** e.g. http://localhost:41234 */
  url: string;
  /** The sample's environment (API key included: tests assert it never leaks). */
  env: Record<string, string>;
  endpoint: RegisteredWebhookEndpoint | undefined;
  close(): Promise<void>;
}

export interface SampleStackOptions {
  /** Simulator options; the retry schedule defaults to a fast one. */
  simulator?: PaymentsSimulatorOptions;
  /** Extra variables over the embedded defaults (e.g. PAYMENTS_WEBHOOK_SECRET). */
  env?: Record<string, string>;
  /** Provider overrides (test doubles), applied to the testing module. */
  configure?: (builder: TestingModuleBuilder) => TestingModuleBuilder;
  /** Where the app logs; default nowhere. */
  logger?: LoggerService;
}

/** A port nobody listens on right now (the sample's PUBLIC_URL must name it before boot). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts the simulator, then the sample (`rawBody: true`), and registers its webhook endpoint. */
export async function startSampleStack(options: SampleStackOptions = {}): Promise<SampleStack> {
  const { simulator, env: simulatorEnv } = await startEmbeddedSimulator(0, {
    retrySchedule: [20, 40, 80, 160, 320, 640, 1280, 2560],
    ...options.simulator,
  });
  const port = await freePort();
  // Reconciliation checks no intent during a test unless the test asks (a sweep would add retrieves it counts).
  const env = { ...simulatorEnv, PORT: String(port), SAMPLE_RECONCILE_AFTER_SECONDS: '86400', ...options.env };
  let builder = Test.createTestingModule({ imports: [SampleAppModule.forRoot({ env })] });
  if (options.configure) builder = options.configure(builder);
  let app: INestApplication | undefined;
  try {
    const moduleRef = await builder.compile();
    app = moduleRef.createNestApplication({ rawBody: true, logger: options.logger ?? false });
    const { url, endpoint } = await listenAndRegister(app);
    const started = app;
    return {
      app: started,
      simulator,
      url,
      env,
      endpoint,
      close: async () => {
        await simulator.stop();
        await started.close();
      },
    };
  } catch (error) {
    await simulator.stop();
    await app?.close();
    throw error;
  }
}

/** Polls `probe` (every 10 ms) until it returns a value other than undefined; fails after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A JSON answer: status, parsed body and the raw text (for leak checks). */
export interface JsonAnswer<T> {
  status: number;
  body: T;
  text: string;
}

export async function requestJson<T = Record<string, unknown>>(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonAnswer<T>> {
  const res = await fetch(url, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text === '' ? undefined : JSON.parse(text)) as T, text };
}
