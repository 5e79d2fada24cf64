import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { ApplicationConfig, DiscoveryService, MetadataScanner } from '@nestjs/core';
import { DEFAULT_PAYMENTS_INSTANCE } from '../../core/payments.defaults.js';
import {
  isDefaultPaymentsInstance,
  PAYMENTS_INSTANCE_DESCRIPTOR,
  PAYMENTS_INSTANCE_NAME,
  type PaymentsInstanceDescriptor,
} from '../../core/payments.instance.js';
import { PAYMENT_EVENTS_REGISTRY, PAYMENTS_WEBHOOKS_PATH } from '../contracts/payments-webhooks.constants.js';
import { PaymentEventsMetadataAccessor } from './payment-events-metadata.accessor.js';
import { PaymentEventsRegistry } from './payment-events.registry.js';
import type { PaymentEvent, PaymentEventContext } from '../contracts/payment-event.types.js';
import { PAYMENTS_WEBHOOKS_LOGGER } from '../contracts/payments-webhooks.messages.js';
import { PaymentsConfigurationError } from '../../errors/payments.errors.js';
import { servedRouteOf } from '../receiver/served-route.js';

export { servedRouteOf };

/** The name of the module that declares a provider (`AppModule`), for boot errors. */
function moduleNameOf(wrapper: DiscoveredWrapper): string {
  const host = (wrapper as { host?: { name?: unknown } }).host;
  return typeof host?.name === 'string' ? host.name : 'an unknown module';
}

type DiscoveredWrapper = ReturnType<DiscoveryService['getProviders']>[number];

/** The method a handler id was given to: its class, the method's name and the module that provides it. */
interface HandlerOwner {
  type: unknown;
  className: string;
  methodName: string;
  module: string;
}

/** A handler bound to another instance than this one: `ClassName.method` and the instance it names. */
interface BoundElsewhere {
  handler: string;
  instance: string;
}

/** Refuses a handler bound to an instance name that no `PaymentsModule` (or receiver) of the app has. */
function checkInstancesExist(elsewhere: readonly BoundElsewhere[], instances: ReadonlySet<string>): void {
  const missing = elsewhere.find(({ instance }) => !instances.has(instance));
  if (missing === undefined) return;
  throw new PaymentsConfigurationError(
    '@OnPaymentEvent({ instance })',
    `of ${missing.handler} is '${missing.instance}', but no PaymentsModule instance has that name (instances: ${[...instances].map((known) => `'${known}'`).join(', ')}), so it would never run`,
    `import PaymentsModule.forRoot({ name: '${missing.instance}', ... }), or bind the handler to an existing instance`,
  );
}

/**
 * Walks every provider and controller at boot and registers each `@OnPaymentEvent` method in the
 * `PaymentEventsRegistry`. Wrappers without an instance and aliases are skipped; the class is read
 * from the instance, so `useValue` and `useFactory` providers are found. Request-scoped and transient
 * providers cannot receive events (there is no request to resolve them in), so they are skipped with a
 * warning. Each module instance has its own explorer, which registers only the handlers bound to its
 * name (`@OnPaymentEvent(type, { instance })`; none: the unnamed instance). The same walk refuses a
 * handler bound to a name no instance of the app has (it would never run).
 */
@Injectable()
export class PaymentEventsExplorer implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger(PAYMENTS_WEBHOOKS_LOGGER);
  private explored = false;
  /** What the walk found bound to another instance, and the instances of the app: checked once every module is up. */
  private bindings: { elsewhere: BoundElsewhere[]; instances: Set<string> } | undefined;
  /** Which method each handler id belongs to (its class, name and module): one id, one method. */
  private readonly owners = new Map<string, HandlerOwner>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly metadataScanner: MetadataScanner,
    private readonly accessor: PaymentEventsMetadataAccessor,
    @Inject(PAYMENT_EVENTS_REGISTRY) private readonly registry: PaymentEventsRegistry,
    @Inject(PAYMENTS_WEBHOOKS_PATH) private readonly webhooksPath: string | false,
    @Optional() @Inject(PAYMENTS_INSTANCE_NAME) private readonly instanceName: string = DEFAULT_PAYMENTS_INSTANCE,
    @Optional() private readonly appConfig?: ApplicationConfig,
  ) {
    // Every instance exists before any lifecycle hook runs, so a hook that reads the registry early
    // (e.g. a queue worker starting) can trigger discovery itself.
    this.registry.setLoader(() => this.explore());
  }

  onModuleInit(): void {
    this.explore();
    this.logRoutes();
  }

  /** Registers the handlers of every discovered provider and controller (once). */
  explore(): void {
    if (this.explored) return;
    this.explored = true;
    const seen = new Set<unknown>();
    const instances = new Set<string>();
    const elsewhere: BoundElsewhere[] = [];
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      if (wrapper.token === PAYMENTS_INSTANCE_DESCRIPTOR && wrapper.instance) {
        instances.add((wrapper.instance as PaymentsInstanceDescriptor).name);
      }
      this.exploreWrapper(wrapper, seen, elsewhere);
    }
    this.bindings = { elsewhere, instances };
  }

  /**
   * Refuses a handler bound to a name no instance has. After every module's `onModuleInit`, so that the
   * instances' own refusals (`PaymentsModule.onModuleInit`: two instances on one name or route) come first.
   */
  onApplicationBootstrap(): void {
    this.explore();
    if (this.bindings === undefined) return;
    const { elsewhere, instances } = this.bindings;
    this.bindings = undefined;
    checkInstancesExist(elsewhere, instances);
  }

  protected exploreWrapper(wrapper: DiscoveredWrapper, seen: Set<unknown>, elsewhere: BoundElsewhere[] = []): void {
    if (wrapper.isAlias) return;
    const { instance } = wrapper;
    if (!instance || typeof instance !== 'object') {
      // A provider without an instance may still be a scoped class that declares handlers: say why it is ignored.
      this.warnIfScoped(wrapper);
      return;
    }
    if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient) {
      this.warnIfScoped(wrapper);
      return;
    }
    if (seen.has(instance)) return;
    seen.add(instance);
    const prototype = Object.getPrototypeOf(instance) as object | null;
    if (!prototype) return;
    const className = (instance as object).constructor?.name || String(wrapper.name);
    for (const methodName of this.metadataScanner.getAllMethodNames(prototype)) {
      const method = (instance as Record<string, unknown>)[methodName];
      const patterns = this.accessor.getEventPatterns(method);
      if (!patterns) continue;
      const options = this.accessor.getHandlerOptions(method);
      if (!this.listensHere(options.instance)) {
        if (!isDefaultPaymentsInstance(options.instance)) {
          elsewhere.push({ handler: `${className}.${methodName}`, instance: options.instance! });
        }
        continue;
      }
      const id = options.handlerId ?? `${className}.${methodName}`;
      this.claimId(id, {
        type: (instance as object).constructor,
        className,
        methodName,
        module: moduleNameOf(wrapper),
      });
      const registered = this.registry.register({
        id,
        patterns,
        options,
        invoke: (event: PaymentEvent, ctx: PaymentEventContext) =>
          (method as (event: PaymentEvent, ctx: PaymentEventContext) => unknown).call(instance, event, ctx),
      });
      if (!registered) {
        this.logger.warn(
          `Handler ${id} is declared by two providers of the same class ${className}; only the first receives events (the handler id is part of the idempotency key, so two would share one claim)`,
        );
      }
    }
  }

  /**
   * One handler id, one method. The same method of the same class reached twice (the class provided
   * twice) is one handler: the warning above says so. Anything else sharing an id is refused, because
   * the id is part of the idempotency key: two methods of one class with one explicit `handlerId`, an
   * explicit `handlerId` that is another method's `ClassName.method`, or two distinct classes (of one
   * name, or with one explicit `handlerId`). One of them would never run, or would run under the
   * other's claim; renaming either by discovery order would not be stable across deployments.
   */
  private claimId(id: string, owner: HandlerOwner): void {
    const first = this.owners.get(id);
    if (first === undefined) {
      this.owners.set(id, owner);
      return;
    }
    if (first.type === owner.type && first.methodName === owner.methodName) return;
    if (first.type !== owner.type && first.className === owner.className && first.methodName === owner.methodName) {
      throw new PaymentsConfigurationError(
        '@OnPaymentEvent({ handlerId })',
        `'${id}' is the handler id of two distinct classes named ${owner.className}: the one in ${first.module} (found first, so the one that received events until now) and the one in ${owner.module}; the handler id is part of the idempotency key, so one would be dropped`,
        `give the one in ${owner.module} its own id: @OnPaymentEvent(type, { handlerId: '${owner.module}.${id}' }) (keep the first one's id, so its stored keys stay valid), or rename one class`,
      );
    }
    const firstHandler = `${first.className}.${first.methodName}`;
    const handler = `${owner.className}.${owner.methodName}`;
    throw new PaymentsConfigurationError(
      '@OnPaymentEvent({ handlerId })',
      `'${id}' is the handler id of two methods: ${firstHandler} (in ${first.module}, found first, so the one that received events until now) and ${handler} (in ${owner.module}); the handler id is part of the idempotency key, so the events of one would be lost (answered unhandled, or run under the other's claim)`,
      `give ${handler} its own id: @OnPaymentEvent(type, { handlerId: '${this.freeIdFor(owner, id)}' }) (keep the first one's id, so its stored keys stay valid)`,
    );
  }

  /** An id no handler has, to suggest: `ClassName.method`, else prefixed with the module's name. */
  private freeIdFor(owner: HandlerOwner, taken: string): string {
    const plain = `${owner.className}.${owner.methodName}`;
    if (plain !== taken && !this.owners.has(plain)) return plain;
    return `${owner.module}.${plain}`;
  }

  private warnIfScoped(wrapper: DiscoveredWrapper): void {
    const metatype = wrapper.metatype;
    const prototype =
      typeof metatype === 'function' && metatype.prototype
        ? (metatype.prototype as object)
        : (wrapper.instance as object | undefined);
    if (!prototype || typeof prototype !== 'object') return;
    const hasHandlers = this.metadataScanner
      .getAllMethodNames(prototype)
      .some((name) => this.accessor.getEventPatterns((prototype as Record<string, unknown>)[name]) !== undefined);
    if (hasHandlers) {
      const name = typeof metatype === 'function' ? metatype.name : String(wrapper.name);
      this.logger.warn(
        `${name} is request-scoped or transient, so its @OnPaymentEvent handlers are ignored: webhook deliveries need a singleton. Make ${name} a default-scoped provider (or move the handlers to one).`,
      );
    }
  }

  /** Whether a handler bound to `name` (undefined: the unnamed instance) listens to this instance. */
  private listensHere(name: string | undefined): boolean {
    return isDefaultPaymentsInstance(name) ? isDefaultPaymentsInstance(this.instanceName) : name === this.instanceName;
  }

  private logRoutes(): void {
    const handlers = this.registry.handlers();
    if (this.webhooksPath === false) {
      if (handlers.length > 0)
        this.logger.log(
          `No webhook route registered; ${handlers.length} handler(s) known (queued processing or another instance receives)`,
        );
      return;
    }
    const instance = isDefaultPaymentsInstance(this.instanceName) ? '' : ` (instance '${this.instanceName}')`;
    this.logger.log(`Receiving webhooks at POST ${servedRouteOf(this.webhooksPath, this.appConfig)}${instance}`);
    const types = this.registry.handledEventTypes();
    if (types.length === 0) {
      this.logger.warn(
        `No @OnPaymentEvent handler found${instance}: every verified event will be acknowledged and ignored`,
      );
      return;
    }
    for (const type of types) {
      this.logger.log(
        `${type} -> ${this.registry
          .handlersFor(type)
          .map((handler) => handler.id)
          .join(', ')}`,
      );
    }
  }
}
