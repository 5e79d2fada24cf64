import 'reflect-metadata';
import { beforeAll, describe, expect, it } from '@jest/globals';
import path from 'node:path';
import ts from 'typescript';

/*
 * The public surface, pinned: every name each entry point of the package exports, values and types.
 *
 * Adding a public name? Add it here, in its group, in the same commit: a name is public when a user
 * writes it (in an app, a test or a handler) or when the docs present it as an extension point.
 * Anything else stays internal, and tests reach it by a deep relative path (`lib/webhooks/...`).
 * Removing or renaming a name breaks users: do not, unless the changelog says so.
 */

interface Surface {
  /** Runtime exports: classes, functions, constants, tokens. */
  values: string[];
  /** Type-only exports: interfaces and type aliases. */
  types: string[];
}

const ROOT: Surface = {
  values: [
    // the module, and the receiver registered apart
    'PaymentsModule',
    'PaymentsWebhooksModule',
    // the API client
    'PaymentsService',
    'InjectPaymentsService',
    'getPaymentsServiceToken',
    // errors
    'PaymentsError',
    'PaymentsApiError',
    'PaymentsAuthenticationError',
    'PaymentsPermissionError',
    'PaymentsRateLimitError',
    'PaymentsConnectionError',
    'PaymentsResponseTooLargeError',
    'PaymentsConfigurationError',
    'PaymentsInvalidArgumentError',
    'PaymentEventIntentMissingError',
    // handlers; `PaymentEvent` and `PaymentEventContext` are types with a runtime twin of the same
    // name (an empty frozen object), so that a decorated handler's signature may import them plainly
    // under isolatedModules + emitDecoratorMetadata (TS1272)
    'OnPaymentEvent',
    'PaymentEvent',
    'PaymentEventContext',
    'isPaymentsWebhookRoute',
    // verifiers, and the schemes as one object (verify and sign)
    'hmacVerifier',
    'standardWebhooksVerifier',
    'hmacScheme',
    'standardWebhooks',
    // stores
    'IdempotencyStore',
    'MemoryIdempotencyStore',
    'RedisIdempotencyStore',
    'PostgresIdempotencyStore',
    // queued processing
    'PaymentEventsQueue',
    'InjectPaymentEventsQueue',
    // delivery listener
    'PaymentDeliveryJournal',
    // transactional handlers
    'pgTransactionRunner',
    'clsTransactionRunner',
  ],
  types: [
    // options
    'PaymentsModuleOptions',
    'PaymentsEnvironment',
    'PaymentsWebhooksOptions',
    // the API client
    'PaymentIntent',
    'PaymentIntentState',
    'SetupIntent',
    'SetupIntentState',
    'WebhookEndpoint',
    // handlers
    'OnPaymentEventOptions',
    'PaymentEventType',
    // declaration merging of new event names augments the root's map
    'PaymentEventTypeMap',
    'PaymentIntentEventData',
    // verifiers, stores, queue, listener, transactions
    'WebhookVerifier',
    'WebhookSignatureScheme',
    'IdempotencyClaim',
    'FailedPaymentEvent',
    'PaymentDeliveryListener',
    'PaymentsTransactionRunner',
  ],
};

/** `nestjs-payments/webhooks`: the whole receiver (the root's receiver names, and the rest). */
const WEBHOOKS: Surface = {
  values: [
    ...ROOT.values.filter(
      (name) =>
        !/^Payments(Module|Service|Error|ApiError|AuthenticationError|PermissionError|RateLimitError|ConnectionError|ResponseTooLargeError|ConfigurationError|InvalidArgumentError)$|^(InjectPaymentsService|getPaymentsServiceToken)$/.test(
          name,
        ),
    ),
    'PAYMENT_EVENT_TYPES',
    // the Standard Webhooks asymmetric scheme (v1a, Ed25519): here, the root being full
    'standardWebhooksEd25519',
    'PaymentEventsRegistry',
    'getPaymentEventsRegistryToken',
    'PAYMENTS_WEBHOOK_ROUTE_METADATA',
    'postgresIdempotencyStoreSchema',
    'getPaymentEventsQueueToken',
    'PaymentsInbox',
    'paymentsInboxSchema',
    // reconciliation (webhooks.reconcile)
    'PaymentsReconciler',
    'IntentWatchStore',
    'MemoryIntentWatchStore',
    'RedisIntentWatchStore',
    'PostgresIntentWatchStore',
    'intentWatchSchema',
    // the entry point below HTTP (issue 43): the route, the broker consumers and the function handler call it
    'PaymentsWebhookReceiver',
    'getPaymentsWebhookReceiverToken',
  ],
  types: [
    ...ROOT.types.filter(
      (name) =>
        ![
          'PaymentsModuleOptions',
          'PaymentsEnvironment',
          'PaymentIntent',
          'PaymentIntentState',
          'SetupIntent',
          'SetupIntentState',
          'WebhookEndpoint',
        ].includes(name),
    ),
    'PaymentsProcessingOptions',
    'PaymentsQueueOptions',
    'PaymentsQueueConnection',
    'PaymentsTransactionsOptions',
    'PaymentEventPattern',
    'PaymentEventTypesOf',
    'SetupIntentEventData',
    'ChargeEventData',
    'WebhookVerificationInput',
    'WebhookVerificationResult',
    'HmacSchemeOptions',
    'HmacVerifierOptions',
    'HmacAlgorithm',
    'HmacSignedPayload',
    'SignatureEncoding',
    'StandardWebhooksOptions',
    'StandardWebhooksVerifierOptions',
    'StandardWebhooksEd25519Options',
    'WebhookSigningOptions',
    'MemoryIdempotencyStoreOptions',
    'RedisIdempotencyStoreOptions',
    'PostgresIdempotencyStoreOptions',
    'PaymentDeliveryRecord',
    'PaymentDispatchRecord',
    'PaymentDispatchHandlerRecord',
    'PaymentRejectionRecord',
    'PaymentDeliveryJournalOptions',
    'PaymentDeliveryJournalEntry',
    'PaymentDeliveryJournalTotals',
    'PaymentsTransaction',
    'PgTransactionRunnerOptions',
    'ClsTransactionRunnerOptions',
    'PaymentsWebhooksModuleOptions',
    'PaymentsWebhooksModuleAsyncOptions',
    'PaymentsWebhooksRegistration',
    'PaymentsWebhooksValues',
    'PaymentReconcileRecord',
    'ReconcileSweepResult',
    'WatchedIntent',
    'WatchedIntentKind',
    'PaymentsReconcileOptions',
    'ReconcileCadenceStep',
    'PaymentsWebhookDelivery',
    'PaymentsWebhookReceipt',
    'WebhookReceiptBody',
    'WebhookRejectionBody',
  ],
};

/** `nestjs-payments/client`: the client and the types of its requests and options. */
const CLIENT: Surface = {
  values: ['PaymentsService', 'InjectPaymentsService', 'getPaymentsServiceToken'],
  types: [
    'PaymentIntent',
    'PaymentIntentState',
    'SetupIntent',
    'SetupIntentState',
    'WebhookEndpoint',
    'PaymentsRequest',
    'PaymentsQuery',
    'PaymentsHttpMethod',
    'PaymentsHttpOptions',
    'PaymentsEnvironment',
    'PaymentsCreateOptions',
  ],
};

const TESTING: Surface = {
  values: ['signWebhook', 'createPaymentEvent', 'PaymentsSimulator', 'describeIdempotencyStore', 'PAYMENTS_RUNTIME'],
  types: [
    'PaymentsRuntime',
    'PaymentsClock',
    'IdempotencyStoreContractOptions',
    'IdempotencyStoreContractFramework',
    'SignWebhookOptions',
    'SignedWebhook',
    'SigningSecret',
    'HmacSigningOptions',
    'StandardWebhooksSigningOptions',
    'PaymentEventOverrides',
    'PaymentsSimulatorOptions',
    'SimulatorSignatureOptions',
    'SimulatorApiKey',
    'SimulatorControls',
    'RateLimitRule',
    'DeliveryOrder',
    'SimulatorRequestCounts',
    'SimulatedEvent',
    'SimulatedIntent',
    'SimulatedWebhookEndpoint',
    'SimulatedWebhookRequest',
    'SimulatedWebhookAttempt',
  ],
};

const HEALTH: Surface = {
  values: ['PaymentsHealthIndicator', 'PaymentsHealthModule'],
  types: ['PaymentsHealthCheckOptions', 'PaymentsStoreHealth', 'PaymentsQueueHealth', 'PaymentsInstanceHealth'],
};

/** `nestjs-payments/serverless` (issue 43): Nest in a function, and the forwarder at the edge (a function, a Nest route). */
const SERVERLESS: Surface = {
  values: ['createPaymentsWebhookHandler', 'createPaymentsForwarder', 'PaymentsForwarderModule'],
  types: [
    'PaymentsWebhookHandler',
    'PaymentsWebhookHandlerOptions',
    'PaymentsApplicationContextOptions',
    'PaymentsForwarder',
    'PaymentsForwarderOptions',
    'PaymentsForwarderLogger',
    'PaymentsForwardReceipt',
    'PaymentsDeliveryPublisher',
    'PaymentsForwarderModuleOptions',
    'PaymentsForwarderModuleAsyncOptions',
    'PaymentsForwardedDelivery',
    'ServerlessHttpEvent',
    'ServerlessHttpResult',
  ],
};

/** `nestjs-payments/rabbitmq` (issue 43): the consumer on Nest's transport, the edge's publisher, the replay. */
const RABBITMQ: Surface = {
  values: [
    'createPaymentsRabbitMqServer',
    'PaymentsRabbitMqModule',
    'RabbitMqDeliveryConsumer',
    'rabbitMqPublisher',
    'replayRabbitMqDeadLetters',
    'rabbitMqQueues',
  ],
  types: [
    'PaymentsRabbitMqOptions',
    'PaymentsBrokerRetryOptions',
    'RabbitMqDeliveryFate',
    'RabbitMqPublisherOptions',
    'RabbitMqReplayOptions',
  ],
};

/** `nestjs-payments/nats` (issue 43): the JetStream consumer, the edge's publisher, the replay. */
const NATS: Surface = {
  values: ['PaymentsNatsModule', 'NatsDeliveryConsumer', 'natsPublisher', 'replayNatsDeadLetters', 'natsDeadLetters'],
  types: [
    'PaymentsNatsOptions',
    'PaymentsBrokerRetryOptions',
    'NatsDeliveryFate',
    'NatsPublisherOptions',
    'NatsReplayOptions',
  ],
};

const root = process.cwd();
const ENTRIES: Array<[entry: string, file: string, surface: Surface, load: () => Promise<object>]> = [
  ['nestjs-payments', 'lib/index.ts', ROOT, () => import('../../lib/index.js')],
  ['nestjs-payments/testing', 'lib/testing/index.ts', TESTING, () => import('../../lib/testing/index.js')],
  ['nestjs-payments/health', 'lib/health/index.ts', HEALTH, () => import('../../lib/health/index.js')],
  ['nestjs-payments/webhooks', 'lib/webhooks/index.ts', WEBHOOKS, () => import('../../lib/webhooks/index.js')],
  ['nestjs-payments/client', 'lib/client/index.ts', CLIENT, () => import('../../lib/client/index.js')],
  ['nestjs-payments/serverless', 'lib/serverless/index.ts', SERVERLESS, () => import('../../lib/serverless/index.js')],
  [
    'nestjs-payments/rabbitmq',
    'lib/brokers/rabbitmq/index.ts',
    RABBITMQ,
    () => import('../../lib/brokers/rabbitmq/index.js'),
  ],
  ['nestjs-payments/nats', 'lib/brokers/nats/index.ts', NATS, () => import('../../lib/brokers/nats/index.js')],
];

const sorted = (names: string[]): string[] => [...names].sort((a, b) => a.localeCompare(b));

/** Every name each entry file exports, values and types, as the compiler sees it. */
function compiledNames(): Map<string, string[]> {
  const config = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const files = ENTRIES.map(([, file]) => path.join(root, file));
  const program = ts.createProgram(files, { ...parsed.options, noEmit: true });
  const checker = program.getTypeChecker();
  const names = new Map<string, string[]>();
  for (const file of files) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
    names.set(file, sorted(checker.getExportsOfModule(module).map((exported) => exported.name)));
  }
  return names;
}

describe('public surface', () => {
  let compiled: Map<string, string[]>;
  beforeAll(() => {
    compiled = compiledNames();
  }, 120_000);

  it.each(ENTRIES)('%s exports exactly the pinned values at runtime', async (_entry, _file, surface, load) => {
    expect(sorted(Object.keys(await load()))).toEqual(sorted(surface.values));
  });

  it.each(ENTRIES)('%s exports exactly the pinned values and types to the compiler', (_entry, file, surface) => {
    expect(compiled.get(path.join(root, file))).toEqual(sorted([...surface.values, ...surface.types]));
  });

  it('keeps the root to what an application writes: at most 50 names', () => {
    expect(ROOT.values.length + ROOT.types.length).toBeLessThanOrEqual(50);
  });

  it('keeps every name the design promises', () => {
    const promised = [
      'PaymentsModule',
      'PaymentsService',
      'OnPaymentEvent',
      'PaymentEvent',
      'PaymentEventContext',
      'PaymentEventType',
      'PaymentsApiError',
      'PaymentsAuthenticationError',
      'PaymentsPermissionError',
      'PaymentsRateLimitError',
      'PaymentsConnectionError',
      'PaymentsConfigurationError',
      'hmacVerifier',
      'standardWebhooksVerifier',
      'WebhookVerifier',
      'MemoryIdempotencyStore',
      'RedisIdempotencyStore',
      'IdempotencyStore',
      'PostgresIdempotencyStore',
      'pgTransactionRunner',
      'PaymentsError',
    ];
    const rootNames = [...ROOT.values, ...ROOT.types];
    for (const name of promised) expect({ name, exported: rootNames.includes(name) }).toEqual({ name, exported: true });
    expect([...TESTING.values]).toEqual(
      expect.arrayContaining(['signWebhook', 'createPaymentEvent', 'PaymentsSimulator', 'describeIdempotencyStore']),
    );
  });
});
