#!/usr/bin/env node
// The public API of each entry point as an API Extractor report checked in under etc/:
//
//   npm run api:check    (CI, after the build) fails when a report differs from the declarations in dist/cjs
//   npm run api:report   builds, then rewrites the reports (`--local`): commit etc/ with the change
//
// One config per entry point: api-extractor.json (`.`) and etc/api-extractor/<entry>.json (`./testing`,
// `./health`, `./webhooks`, `./client`), which extend it. All five run in this one process over one
// TypeScript program (API Extractor's CompilerState), instead of five `api-extractor run`.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const local = process.argv.includes('--local');
const { CompilerState, Extractor, ExtractorConfig } = createRequire(import.meta.url)('@microsoft/api-extractor');

const configFiles = [
  join(root, 'api-extractor.json'),
  ...readdirSync(join(root, 'etc', 'api-extractor'))
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => join(root, 'etc', 'api-extractor', name)),
];
const configs = configFiles.map((file) => ExtractorConfig.loadFileAndPrepare(file));

const missing = configs.map((config) => config.mainEntryPointFilePath).filter((entry) => !existsSync(entry));
if (missing.length > 0) {
  console.error(
    `api-report: no declarations at ${missing.map((entry) => relative(root, entry)).join(', ')}: run \`npm run build\` first`,
  );
  process.exit(1);
}

const compilerState = CompilerState.create(configs[0], {
  additionalEntryPoints: configs.slice(1).map((config) => config.mainEntryPointFilePath),
});

/** API Extractor's own lines about the report and its start-up, which the lines below replace. */
const QUIET = new Set([
  'console-preamble',
  'console-compiler-version-notice',
  'console-api-report-copied',
  'console-api-report-created',
  'console-api-report-not-copied',
  'console-api-report-unchanged',
  'console-writing-api-report',
]);

const failed = [];
for (const config of configs) {
  const report = relative(root, config.reportFilePath);
  const result = Extractor.invoke(config, {
    localBuild: local,
    compilerState,
    messageCallback: (message) => {
      // The outcome is printed below, one line per entry point, with the diff when a report is stale.
      if (QUIET.has(message.messageId)) message.handled = true;
    },
  });
  const entry = relative(root, config.mainEntryPointFilePath);
  if (local) {
    console.log(`api-report: ${report} ${result.apiReportChanged ? 'rewritten' : 'unchanged'} (${entry})`);
  } else if (result.apiReportChanged) {
    console.error(`api-report: ${report} differs from ${entry}:`);
    spawnSync('diff', ['-u', report, relative(root, config.reportTempFilePath)], { cwd: root, stdio: 'inherit' });
  } else {
    console.log(`api-report: ${report} matches ${entry}`);
  }
  if (!result.succeeded) failed.push(report);
}

if (failed.length > 0) {
  console.error(
    local
      ? `api-report: API Extractor reported errors for ${failed.join(', ')} (above)`
      : `api-report: ${failed.join(', ')} out of date or with errors (above). A change to the exported API shows up in review: ` +
          'run `npm run api:report` and commit etc/.',
  );
  process.exit(1);
}
