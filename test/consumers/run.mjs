#!/usr/bin/env node
// `npm run test:consumers`: the consumer matrix. Packs the package the way a registry would ship it
// (compiled in a temporary copy of the repository, then `npm pack`), installs that tarball into each
// app under test/consumers/ with a plain `npm install` (never --legacy-peer-deps, so a peer range that
// refuses the app's Nest fails here), then in each app:
//   1. `tsc -p tsconfig.misspelt.json` compiles the app (its own TypeScript, its own module system) and
//      src/misspelt.ts: it must fail with exactly one error, the misspelt event name (and emit the rest),
//   2. `node dist/main.js` boots the app; its client creates and retrieves an intent on a
//      PaymentsSimulator the runner starts (PAYMENTS_BASE_URL, PAYMENTS_API_KEY), and signed deliveries
//      must answer 200 handled, 200 duplicate, 401 forged, 401 tampered, with the handler run once.
// The app's own dependencies install while the package is packed; the tarball is installed after.
// Nothing is built in the checkout: dist/ here belongs to other work.
//
// Options: --only name,name   --keep (leave the temporary folder)   --concurrency N (default 2)
//          (installs of all apps overlap; compiles and app runs take at most N at once)
//          --rev REV (pack the files of that commit, e.g. HEAD, instead of the working tree)
import { spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const value = (name, fallback) => {
  const index = args.indexOf(name);
  return index === -1 ? fallback : args[index + 1];
};
const only = value('--only', '')
  .split(',')
  .filter((name) => name !== '');
const concurrency = Number(value('--concurrency', '2'));

/** At most `concurrency` compiles or app runs at once (CPU); installs (network, disk) all overlap. */
const cpuSlots = { free: concurrency, waiting: [] };
async function withCpu(fn) {
  if (cpuSlots.free > 0) cpuSlots.free -= 1;
  else await new Promise((resolveSlot) => cpuSlots.waiting.push(resolveSlot));
  try {
    return await fn();
  } finally {
    const next = cpuSlots.waiting.shift();
    if (next) next();
    else cpuSlots.free += 1;
  }
}
const keep = flag('--keep');
const rev = value('--rev', '');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const quietNpm = {
  ...process.env,
  npm_config_fund: 'false',
  npm_config_audit: 'false',
  npm_config_update_notifier: 'false',
};
// The misspelt name each app's src/misspelt.ts uses; the compile error must name it.
const MISSPELT = 'payment_intent.succeded';

/** Runs a command; resolves with its exit code and combined output (never rejects on a non-zero exit). */
function run(command, commandArgs, cwd, extraEnv = {}, timeoutMs = 300_000) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, commandArgs, {
      cwd,
      env: { ...quietNpm, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      output += `\n[consumers] ${command} ${commandArgs.join(' ')} timed out after ${timeoutMs} ms`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? (signal ? 1 : 0), output });
    });
  });
}

async function must(step, command, commandArgs, cwd, extraEnv = {}) {
  const result = await run(command, commandArgs, cwd, extraEnv);
  if (result.code !== 0) throw new Error(`${step} failed (exit ${result.code}):\n${result.output.trim()}`);
  return result.output;
}

/** Compiles lib/ in a temporary copy of the package files and packs it; returns the tarball path. */
async function packTarball(work) {
  const copy = join(work, 'package');
  await mkdir(copy);
  const sources = ['lib', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'README.md', 'LICENSE'];
  if (rev !== '') {
    const present = (await must('git ls-tree', 'git', ['ls-tree', '--name-only', rev, ...sources], repo))
      .split('\n')
      .filter(Boolean);
    await must(
      `git archive ${rev}`,
      'sh',
      [
        '-c',
        `git -C "$1" archive "$2" ${present.map((p) => `'${p}'`).join(' ')} | tar -x -C "$3"`,
        'sh',
        repo,
        rev,
        copy,
      ],
      repo,
    );
  } else {
    for (const name of sources) {
      const from = join(repo, name);
      if (await stat(from).catch(() => undefined)) await cp(from, join(copy, name), { recursive: true });
    }
  }
  const manifest = JSON.parse(await readFile(join(copy, 'package.json'), 'utf8'));
  // The compiler and type packages of the checkout; the copy gets its own dist/.
  await symlink(join(repo, 'node_modules'), join(copy, 'node_modules'), 'dir');
  await must(
    'compile lib/ (tsc -p tsconfig.build.json)',
    process.execPath,
    [join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    copy,
  );
  // --ignore-scripts: `prepare` would compile again; it was just done above.
  const packed = await must('npm pack', npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', work], copy);
  const [{ filename, files }] = JSON.parse(packed.slice(packed.indexOf('[')));
  const paths = files.map((file) => file.path);
  for (const expected of ['package.json', 'dist/lib/index.js', 'dist/lib/index.d.ts', 'dist/lib/testing/index.js']) {
    if (!paths.includes(expected)) throw new Error(`the tarball lacks ${expected}`);
  }
  const stray = paths.filter((path) => /^(test|sample|bench|lib)\//.test(path) || path.endsWith('.spec.js'));
  if (stray.length > 0) throw new Error(`the tarball ships files it should not: ${stray.slice(0, 5).join(', ')}`);
  return { tarball: join(work, filename), files: paths.length, version: manifest.version };
}

/** One app: copy, install the tarball, compile, boot and deliver, refuse the misspelt name. */
async function runApp(name, ready, work) {
  const started = Date.now();
  const dir = join(work, 'apps', name);
  await cp(join(here, name), dir, { recursive: true, filter: (source) => !/[/\\](node_modules|dist)$/.test(source) });
  await cp(join(here, 'shared', 'deliveries.ts'), join(dir, 'src', 'deliveries.ts'));
  const steps = [];
  const timed = async (step, fn) => {
    const t0 = Date.now();
    const out = await fn();
    steps.push(`${step} ${((Date.now() - t0) / 1000).toFixed(1)}s`);
    return out;
  };
  // The app's own dependencies first (while the package is still being packed), then the tarball:
  // that second plain install resolves the peers again, so a range that refuses this Nest fails it.
  await timed('deps', () => must('npm install', npm, ['install', '--no-package-lock'], dir));
  const { tarball, simulator } = await ready;
  await timed('tarball', () => must('npm install <tarball>', npm, ['install', '--no-package-lock', tarball], dir));
  const versions = JSON.parse(
    await must(
      'read installed versions',
      process.execPath,
      [
        '-e',
        `const v=(p)=>{try{return require(require.resolve(p+'/package.json',{paths:[process.cwd()]})).version}catch{return null}};` +
          `console.log(JSON.stringify({nest:v('@nestjs/core'),typescript:v('typescript'),payments:v('nestjs-payments')}))`,
      ],
      dir,
    ),
  );
  // One compile of the whole app, src/misspelt.ts included: it must fail with exactly one error, on the
  // misspelt event name, and still emit the rest (tsc emits despite type errors).
  const compiled = await withCpu(() =>
    timed('tsc', () =>
      run(
        process.execPath,
        [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.misspelt.json'],
        dir,
      ),
    ),
  );
  const errors = compiled.output.split('\n').filter((line) => /error TS\d+/.test(line));
  if (compiled.code === 0) throw new Error(`the misspelt event name '${MISSPELT}' compiled; it must be refused`);
  if (errors.length !== 1 || !errors[0].startsWith('src/misspelt.ts') || !errors[0].includes(MISSPELT)) {
    throw new Error(
      `tsc must fail with exactly one error, in src/misspelt.ts, naming '${MISSPELT}'; got:\n${compiled.output.trim()}`,
    );
  }
  const smoke = await withCpu(() =>
    timed('deliveries', () =>
      must('node dist/main.js (client calls and signed deliveries)', process.execPath, ['dist/main.js'], dir, {
        // The simulator plays the service for the app's client calls (plain http on 127.0.0.1).
        PAYMENTS_BASE_URL: simulator.baseUrl,
        PAYMENTS_API_KEY: simulator.keyFor(name),
      }),
    ),
  );
  const summary = smoke
    .trim()
    .split('\n')
    .filter((line) => line.startsWith('[consumer]'))
    .join('\n  ');
  return {
    versions,
    summary,
    refused: errors[0].replace(/^.*?(error TS\d+)/, '$1').slice(0, 120),
    steps,
    seconds: (Date.now() - started) / 1000,
  };
}

async function main() {
  const started = Date.now();
  const apps = [];
  for (const entry of await readdir(here, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    if (!(await stat(join(here, entry.name, 'package.json')).catch(() => undefined))) continue;
    if (only.length === 0 || only.includes(entry.name)) apps.push(entry.name);
  }
  apps.sort();
  if (apps.length === 0) throw new Error(`no consumer app matched ${only.join(',')}`);

  const work = await mkdtemp(join(tmpdir(), 'nestjs-payments-consumers-'));
  let passed = 0;
  let simulator;
  let failed = 0;
  try {
    const ready = packTarball(work).then(async (pack) => {
      console.log(
        `[consumers] packed ${pack.tarball} (${pack.files} files) in ${((Date.now() - started) / 1000).toFixed(1)}s; node ${process.version}`,
      );
      // One simulator for every app, each app with its own key (its own account), from the packed build.
      const { PaymentsSimulator } = await import(
        pathToFileURL(join(work, 'package', 'dist', 'lib', 'testing', 'index.js')).href
      );
      const sim = new PaymentsSimulator({ apiKeys: [] });
      const baseUrl = await sim.start();
      simulator = {
        baseUrl,
        stop: () => sim.stop(),
        keyFor: (app) => {
          const key = `sk_test_consumer_${app.replace(/[^a-z0-9]/g, '_')}`;
          sim.addApiKey(key);
          return key;
        },
      };
      return { tarball: pack.tarball, simulator };
    });
    ready.catch(() => undefined); // reported by every app that waits for it
    const queue = [...apps];
    const worker = async () => {
      while (queue.length > 0) {
        const name = queue.shift();
        try {
          const result = await runApp(name, ready, work);
          passed += 1;
          console.log(
            `PASS ${name} (Nest ${result.versions.nest}, TypeScript ${result.versions.typescript}; ${result.seconds.toFixed(1)}s: ${result.steps.join(', ')})\n` +
              `  ${result.summary}\n  [W11] misspelt event name refused: ${result.refused}`,
          );
        } catch (error) {
          failed += 1;
          console.log(`FAIL ${name}: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: apps.length }, worker));
  } catch (error) {
    failed += apps.length - passed - failed;
    console.log(`FAIL packing: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    await simulator?.stop();
    if (keep) console.log(`[consumers] kept ${work}`);
    else await rm(work, { recursive: true, force: true });
  }
  console.log(`[consumers] ${((Date.now() - started) / 1000).toFixed(1)}s`);
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed === 0 ? 0 : 1;
}

await main();
