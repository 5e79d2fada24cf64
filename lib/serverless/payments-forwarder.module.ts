import {
  Controller,
  HttpCode,
  Inject,
  Logger,
  Module,
  OnApplicationShutdown,
  Post,
  Req,
  Res,
  VERSION_NEUTRAL,
  type DynamicModule,
  type InjectionToken,
  type Provider,
  type Type,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { fail, isObject } from '../errors/payments-option.checks.js';
import { normaliseWebhooksPath } from '../webhooks/payments-webhooks.providers.js';
import {
  createPaymentsForwarder,
  type PaymentsForwarder,
  type PaymentsForwarderOptions,
} from './payments-forwarder.js';

/** Options of `PaymentsForwarderModule.register`: the route, and the forwarder's own options. */
export interface PaymentsForwarderModuleOptions extends Omit<PaymentsForwarderOptions, 'logger'> {
  /** The route the service posts to. Default 'payments/webhooks'. */
  path?: string;
}

/** Options of `PaymentsForwarderModule.registerAsync`: the route is static (routes exist before factories run). */
export interface PaymentsForwarderModuleAsyncOptions {
  path?: string;
  imports?: DynamicModule['imports'];
  inject?: InjectionToken[];
  useFactory: (
    ...args: never[]
  ) => Omit<PaymentsForwarderOptions, 'logger'> | Promise<Omit<PaymentsForwarderOptions, 'logger'>>;
}

const PAYMENTS_FORWARDER = Symbol('PAYMENTS_FORWARDER');
const PAYMENTS_FORWARDER_OPTIONS = Symbol('PAYMENTS_FORWARDER_OPTIONS');

/** Closes the publisher when the app shuts down. */
class ForwarderCloser implements OnApplicationShutdown {
  constructor(@Inject(PAYMENTS_FORWARDER_OPTIONS) private readonly options: PaymentsForwarderOptions) {}

  async onApplicationShutdown(): Promise<void> {
    await this.options.publisher.close?.();
  }
}

function createForwarderController(path: string): Type<unknown> {
  @Controller({ path, version: VERSION_NEUTRAL })
  class PaymentsForwarderController {
    constructor(
      @Inject(PAYMENTS_FORWARDER) private readonly forwarder: PaymentsForwarder,
      @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost,
    ) {}

    @Post()
    @HttpCode(200)
    async forward(
      @Req() request: { rawBody?: unknown; headers: Record<string, string | string[] | undefined> },
      @Res() response: unknown,
    ): Promise<void> {
      if (!Buffer.isBuffer(request.rawBody)) {
        logger.error(
          'Delivery refused with 500: the raw request body is not available, so it cannot be forwarded byte for byte. Fix: create the app with NestFactory.create(AppModule, { rawBody: true })',
        );
        this.adapterHost.httpAdapter.reply(response, { received: false, error: 'raw_body_unavailable' }, 500);
        return;
      }
      const receipt = await this.forwarder.forward({ body: request.rawBody, headers: request.headers });
      this.adapterHost.httpAdapter.reply(response, receipt.body, receipt.status);
    }
  }
  return PaymentsForwarderController;
}

/**
 * The forwarder as a Nest route (the edge of a broker shape, in a Nest app): `POST {path}` publishes the
 * delivery's raw bytes and headers, unchanged, with the publisher given, and answers 200 only once the
 * broker confirmed it (401 forged with `verifier`, 413 too large, 503 broker down). The app is created
 * with `rawBody: true`. Nothing of the receiver runs here: the consumer verifies and dispatches.
 *
 * @example
 * PaymentsForwarderModule.register({
 *   verifier: standardWebhooks({ secrets: process.env.PAYMENTS_WEBHOOK_SECRET! }),
 *   publisher: rabbitMqPublisher({ url: process.env.AMQP_URL!, queue: 'payments.webhooks' }),
 * })
 */
@Module({})
export class PaymentsForwarderModule {
  static register(options: PaymentsForwarderModuleOptions): DynamicModule {
    if (!isObject(options))
      fail('PaymentsForwarderModule.register(options)', 'must be an object', 'pass { publisher, verifier?, path? }');
    const { path, ...forwarder } = options;
    return build(path, { provide: PAYMENTS_FORWARDER_OPTIONS, useValue: forwarder });
  }

  static registerAsync(options: PaymentsForwarderModuleAsyncOptions): DynamicModule {
    if (!isObject(options) || typeof options.useFactory !== 'function') {
      fail(
        'PaymentsForwarderModule.registerAsync(options)',
        'needs a useFactory',
        'pass { path?, inject, useFactory: (...) => ({ publisher, verifier? }) }',
      );
    }
    const module = build(options.path, {
      provide: PAYMENTS_FORWARDER_OPTIONS,
      useFactory: options.useFactory,
      inject: options.inject ?? [],
    });
    return { ...module, imports: options.imports ?? [] };
  }
}

const logger = new Logger('PaymentsForwarder');

function build(path: string | undefined, values: Provider): DynamicModule {
  return {
    module: PaymentsForwarderModule,
    controllers: [createForwarderController(normaliseWebhooksPath(path))],
    providers: [
      values,
      {
        provide: PAYMENTS_FORWARDER,
        useFactory: (options: PaymentsForwarderOptions) => createPaymentsForwarder({ ...options, logger }),
        inject: [PAYMENTS_FORWARDER_OPTIONS],
      },
      ForwarderCloser,
    ],
  };
}
