/**
 * The part of an ioredis client (`Redis` or `Cluster`) the Redis stores use. Declared here, rather than
 * imported from `ioredis`, so that the package's types compile for apps that do not install ioredis
 * (an optional peer). Any ioredis 5/6 client satisfies it. Its own file, so that the idempotency store
 * and the watch store it builds both import it without importing each other.
 */
export interface RedisScriptClient {
  evalsha(sha1: string, numberOfKeys: number | string, ...args: (string | number)[]): Promise<unknown>;
  eval(script: string, numberOfKeys: number | string, ...args: (string | number)[]): Promise<unknown>;
  /** Used by `ping()` when present (every ioredis client has it). */
  ping?(): Promise<unknown>;
}
