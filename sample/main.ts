import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { SampleAppModule } from './sample-app.module.js';
import type { SampleConfig } from './sample.config.js';
import { listenAndRegister, startEmbeddedSimulator, type EmbeddedSimulator } from './sample.bootstrap.js';

/**
 * `npm run sample`. Without `PAYMENTS_BASE_URL`, starts the local simulator with a fresh key and runs
 * the sample against it (in-memory store, inline processing: nothing to install). With it, runs
 * against that (sandbox) service and starts no simulator. Ctrl-C stops both.
 */
async function main(): Promise<void> {
  const logger = new Logger('Sample');
  const embedded: EmbeddedSimulator | undefined = process.env['PAYMENTS_BASE_URL']
    ? undefined
    : await startEmbeddedSimulator(Number(process.env['SIMULATOR_PORT'] ?? 0));
  if (embedded !== undefined) logger.log(`payment service simulator at ${embedded.simulator.baseUrl}`);

  let app;
  try {
    app = await NestFactory.create(SampleAppModule.forRoot({ env: { ...process.env, ...embedded?.env } }), {
      rawBody: true,
      abortOnError: false,
    });
    const { url } = await listenAndRegister(app);
    console.log(`Sample merchant app listening on ${url}`);
    const sample = app.get(ConfigService).getOrThrow<SampleConfig>('sample');
    console.log(`  developer panel: ${url}/?dev=1 (test cards in the payment form; see docs/sample-shop.md)`);
    console.log(
      sample.admin.token === undefined
        ? '  operator view: /admin is disabled; set SHOP_ADMIN_TOKEN (16+ characters) to enable it'
        : `  operator view: ${url}/admin (sign in with SHOP_ADMIN_TOKEN)`,
    );
  } catch (error) {
    await app?.close();
    await embedded?.simulator.stop();
    throw error;
  }

  const started = app;
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      process.exit(130); // a second Ctrl-C: do not wait any longer
    }
    stopping = true;
    logger.log(`${signal}: stopping`);
    void (async () => {
      // Simulator first: no new deliveries or retries reach an app that is closing.
      await embedded?.simulator.stop();
      await started.close();
      process.exit(0);
    })().catch((error: unknown) => {
      logger.error(`stop failed: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? `${error.name}: ${error.message}` : error);
  process.exit(1);
});
