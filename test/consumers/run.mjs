#!/usr/bin/env node
// `npm run test:consumers`: the consumer matrix. Packs the package the way a registry would ship it
// (compiled in a temporary copy of the repository, then `npm pack`), installs that tarball into each
// app under test/consumers/ with a plain `npm install` (never --legacy-peer-deps, so a peer range that
// refuses the app's Nest fails here), then in each app:
//   1. `tsc -p tsconfig.misspelt.json` type-checks the app (its own TypeScript, its own module system) and
//      test/misspelt.ts: it must fail with exactly one error, the misspelt event name; then `nest build`
//      (the app's @nestjs/cli, its generated tsconfig.json and tsconfig.build.json) must build it,
//   2. under each Node version (--node, default 20,22,24; each a binary of the registry's `node`
//      package, installed once into a cache folder), with the app installed and compiled once:
//      a. `node dist/main.js` boots the app; its client creates and retrieves an intent on a
//         PaymentsSimulator the runner starts (PAYMENTS_BASE_URL, PAYMENTS_API_KEY), `import()` and
//         `require()` of the package give one PaymentsService, and signed deliveries must answer 200
//         handled, 200 duplicate, 401 forged, 401 tampered, with the handler run once;
//      b. `npm test` and `npm run test:e2e`: the app's own test runner as `nest new` sets it up (Jest +
//         ts-jest in CommonJS apps, Vitest in the Nest 12 ESM app) runs `nest new`'s generated tests
//         (src/app.controller.spec.ts, test/app.e2e-spec.ts: GET /), the README's handler test
//         (shared/quick-start/, copied as src/quick-start/) and the payments e2e test (a signed delivery).
// The app's own dependencies install while the package is packed; the tarball is installed after.
// Nothing is built in the checkout: dist/ here belongs to other work.
//
// Options: --only name,name   --keep (leave the temporary folder)   --concurrency N (default 2)
//          (installs of all apps overlap; compiles and app runs take at most N at once)
//          --rev REV (pack the files of that commit, e.g. HEAD, instead of the working tree)
//          --node 20,22,24 (Node majors; `current` is the Node running this script)
import { spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { checkSimulatorCli, SIMULATOR_CLI_APP } from './shared/simulator-cli.mjs';

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
const nodeMajors = value('--node', '20,22,24')
  .split(',')
  .filter((major) => major !== '');

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
  const sources = ['lib', 'scripts', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'README.md', 'LICENSE'];
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
  const manifestText = await readFile(join(copy, 'package.json'), 'utf8');
  const manifest = JSON.parse(manifestText);
  // The compiler and type packages of the checkout; the copy gets its own dist/.
  await symlink(join(repo, 'node_modules'), join(copy, 'node_modules'), 'dir');
  // A real `npm pack`, scripts and all: `prepack` builds (tsc, then the ES module wrappers) and packs
  // package.json without its scripts, `postpack` puts it back.
  const packed = await must('npm pack', npm, ['pack', '--json', '--pack-destination', work], copy);
  if ((await readFile(join(copy, 'package.json'), 'utf8')) !== manifestText) {
    throw new Error('postpack did not restore package.json');
  }
  const [{ filename, files, size, unpackedSize }] = JSON.parse(packed.slice(packed.search(/^\[/m)));
  const paths = files.map((file) => file.path);
  for (const expected of [
    'package.json',
    'dist/cjs/package.json',
    'dist/cjs/index.js',
    'dist/cjs/index.d.ts',
    'dist/cjs/testing/index.js',
    'dist/esm/index.js',
    'dist/esm/testing/index.js',
    'dist/esm/health/index.js',
  ]) {
    if (!paths.includes(expected)) throw new Error(`the tarball lacks ${expected}`);
  }
  const packedManifest = JSON.parse(
    await must('read the packed package.json', 'tar', ['-xzOf', join(work, filename), 'package/package.json'], work),
  );
  if (packedManifest.scripts !== undefined) {
    throw new Error(`the packed package.json has scripts: ${Object.keys(packedManifest.scripts).join(', ')}`);
  }
  const stray = paths.filter((path) => /^(test|sample|bench|lib|scripts)\//.test(path) || path.endsWith('.spec.js'));
  if (stray.length > 0) throw new Error(`the tarball ships files it should not: ${stray.slice(0, 5).join(', ')}`);
  return { tarball: join(work, filename), files: paths.length, size, unpackedSize, version: manifest.version };
}

/**
 * The Node binaries to run the apps with: `current` is this process's; a major (20, 22, 24) is the
 * registry's `node` package of that major, installed once into a cache folder (its postinstall fetches
 * the binary for this platform) and reused by later runs.
 */
async function nodeBinaries() {
  const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'nestjs-payments-consumers');
  return Promise.all(
    nodeMajors.map(async (major) => {
      if (major === 'current') return { label: process.version, bin: process.execPath };
      if (!/^\d+$/.test(major)) throw new Error(`--node takes majors (20,22,24) or current; got ${major}`);
      const folder = join(cache, `node${major}`);
      const bin = join(folder, 'node_modules', 'node', 'bin', 'node');
      const probe = await run(bin, ['--version'], folder).catch(() => ({ code: 1, output: '' }));
      if (probe.code !== 0 || !probe.output.startsWith(`v${major}.`)) {
        await mkdir(folder, { recursive: true });
        await writeFile(join(folder, 'package.json'), '{"private":true}\n');
        await must(`npm install node@${major}`, npm, ['install', '--no-package-lock', `node@${major}`], folder);
      }
      const version = (await must(`node ${major} --version`, bin, ['--version'], folder)).trim();
      if (!version.startsWith(`v${major}.`)) throw new Error(`node@${major} installed ${version}`);
      return { label: version, bin };
    }),
  );
}

/**
 * Copies a shared file into an app, unless the app has its own file there (e.g. the Fastify app's
 * handler test). The shared files import relative files without `.js`, as the README and a CommonJS
 * `nest new` app write them; ES module apps get the `.js` that `module: nodenext` wants there.
 */
async function copyShared(from, to, esm) {
  if (await stat(to).catch(() => undefined)) return;
  const text = await readFile(from, 'utf8');
  await mkdir(dirname(to), { recursive: true });
  await writeFile(to, esm ? text.replace(/(from '\.{1,2}\/[^']+?)(?<!\.js)'/g, "$1.js'") : text);
}

/** Lines of an npm install that warn about the engines (EBADENGINE), shortened to the packages named. */
function engineWarnings(output) {
  const names = new Set();
  for (const match of output.matchAll(/EBADENGINE[^\n]*\n[^\n]*package: '([^']+)'/g)) names.add(match[1]);
  for (const match of output.matchAll(/EBADENGINE Unsupported engine \{\s*package: '([^']+)'/g)) names.add(match[1]);
  return [...names];
}

/** One app: copy, install the tarball, compile; then under each Node: boot and deliver, its own tests. */
async function runApp(name, ready, work, nodes) {
  const started = Date.now();
  const dir = join(work, 'apps', name);
  await cp(join(here, name), dir, { recursive: true, filter: (source) => !/[/\\](node_modules|dist)$/.test(source) });
  const appManifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
  const esm = appManifest.type === 'module';
  // `nest new --type cjs` v12 apps test with Jest's CommonJS runtime, which can load Nest 12 (ESM only)
  // from Node 24.9 on; below that, the app's tests must stop at Nest's own package, never at this one.
  const testsNeedNode = appManifest.consumerMatrix?.testsNeedNode;
  await copyShared(join(here, 'shared', 'deliveries.ts'), join(dir, 'src', 'deliveries.ts'), esm);
  for (const file of await readdir(join(here, 'shared', 'quick-start'))) {
    await copyShared(join(here, 'shared', 'quick-start', file), join(dir, 'src', 'quick-start', file), esm);
  }
  const steps = [];
  const timed = async (step, fn) => {
    const t0 = Date.now();
    const out = await fn();
    steps.push(`${step} ${((Date.now() - t0) / 1000).toFixed(1)}s`);
    return out;
  };
  // The app's own dependencies first (while the package is still being packed), then the tarball:
  // that second plain install resolves the peers again, so a range that refuses this Nest fails it.
  const depsOutput = await timed('deps', () => must('npm install', npm, ['install', '--no-package-lock'], dir));
  const { tarball, simulator } = await ready;
  const tarballOutput = await timed('tarball', () =>
    must('npm install <tarball>', npm, ['install', '--no-package-lock', tarball], dir),
  );
  // No install script of this package for npm to list (npm 11's allowScripts review): the tarball has none.
  const ownScripts = tarballOutput
    .split('\n')
    .filter((line) => /warn/i.test(line) && line.includes('nestjs-payments@'));
  if (ownScripts.length > 0)
    throw new Error(`npm install <tarball> warned about the package:\n${ownScripts.join('\n')}`);
  const versions = JSON.parse(
    await must(
      'read installed versions',
      process.execPath,
      [
        '-e',
        `const v=(p)=>{try{return require(require.resolve(p+'/package.json',{paths:[process.cwd()]})).version}catch{return null}};` +
          `console.log(JSON.stringify({nest:v('@nestjs/core'),typescript:v('typescript'),payments:v('nestjs-payments'),jest:v('jest'),vitest:v('vitest')}))`,
      ],
      dir,
    ),
  );
  // A type check of the app, test/misspelt.ts included (tsconfig.misspelt.json, no emit): it must fail
  // with exactly one error, on the misspelt event name.
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
  if (errors.length !== 1 || !errors[0].startsWith('test/misspelt.ts') || !errors[0].includes(MISSPELT)) {
    throw new Error(
      `tsc must fail with exactly one error, in test/misspelt.ts, naming '${MISSPELT}'; got:\n${compiled.output.trim()}`,
    );
  }
  // The app's own build, as its users run it: `nest build` of the app's @nestjs/cli, with the tsconfig.json
  // and tsconfig.build.json `nest new` generated (isolatedModules, emitDecoratorMetadata, ...), over
  // src/ with the README's quick start in src/quick-start/. Any TypeScript error fails it (TS1272 was one).
  const built = await withCpu(() =>
    timed('nest build', () =>
      run(process.execPath, [join(dir, 'node_modules', '@nestjs', 'cli', 'bin', 'nest.js'), 'build'], dir),
    ),
  );
  if (
    built.code !== 0 ||
    /error TS\d+/.test(built.output) ||
    !(await stat(join(dir, 'dist', 'main.js')).catch(() => false))
  ) {
    throw new Error(`nest build failed (exit ${built.code}, or no dist/main.js):\n${built.output.trim()}`);
  }
  const perNode = [];
  for (const node of nodes) {
    // The node of PATH is the one `npm test` and the runners' `#!/usr/bin/env node` start.
    const env = { PATH: `${dirname(node.bin)}:${process.env.PATH ?? ''}` };
    const where = `on Node ${node.label}`;
    const smoke = await withCpu(() =>
      timed(`${node.label} main`, () =>
        must(`node dist/main.js ${where} (client calls and signed deliveries)`, node.bin, ['dist/main.js'], dir, {
          ...env,
          // The simulator plays the service for the app's client calls (plain http on 127.0.0.1).
          PAYMENTS_BASE_URL: simulator.baseUrl,
          PAYMENTS_API_KEY: simulator.keyFor(name),
        }),
      ),
    );
    const tests = [];
    const runnable = testsNeedNode === undefined || atLeast(node.label, testsNeedNode);
    for (const script of ['test', 'test:e2e']) {
      if (runnable) {
        const output = await withCpu(() =>
          timed(`${node.label} ${script}`, () => must(`npm run ${script} ${where}`, npm, ['run', script], dir, env)),
        );
        tests.push(`${script}: ${testCount(output)}`);
        continue;
      }
      const { code, output } = await withCpu(() =>
        timed(`${node.label} ${script}`, () => run(npm, ['run', script], dir, env)),
      );
      const stop = /Must use import to load ES Module: \S*node_modules\/(@nestjs\/[^/]+)\//.exec(output);
      if (code === 0 || !stop || /Must use import to load ES Module: \S*node_modules\/nestjs-payments\//.test(output)) {
        throw new Error(
          `npm run ${script} ${where}: expected Jest to stop at Nest's own ES module (its tests need Node ${testsNeedNode}+), got exit ${code}:\n${output.trim().slice(-2000)}`,
        );
      }
      tests.push(`${script}: stops at ${stop[1]} (ESM only; Jest needs Node ${testsNeedNode}+), as expected`);
    }
    const warnings = [...new Set(smoke.split('\n').filter((line) => /Warning|warning:/.test(line)))];
    perNode.push(
      `Node ${node.label}: main.js ok, ${tests.join(', ')}` +
        (warnings.length > 0 ? `; warnings: ${warnings.map((line) => line.trim().slice(0, 140)).join(' | ')}` : ''),
    );
    if (node === nodes[0]) {
      perNode.unshift(
        ...smoke
          .trim()
          .split('\n')
          .filter((line) => line.startsWith('[consumer]')),
      );
    }
  }
  // `npx nestjs-payments simulator` forwarding to this app (one app, this Node): shared/simulator-cli.mjs.
  if (name === SIMULATOR_CLI_APP) perNode.push(await withCpu(() => timed('cli', () => checkSimulatorCli(dir))));
  const engines = engineWarnings(`${depsOutput}\n${tarballOutput}`);
  return {
    versions,
    summary: perNode.join('\n  '),
    engines,
    refused: errors[0].replace(/^.*?(error TS\d+)/, '$1').slice(0, 120),
    steps,
    seconds: (Date.now() - started) / 1000,
  };
}

/** Whether a version label (`v22.23.3`) is at least `minimum` (`24.9.0`). */
function atLeast(label, minimum) {
  const have = label.replace(/^v/, '').split('.').map(Number);
  const want = minimum.split('.').map(Number);
  for (let i = 0; i < 3; i += 1) if ((have[i] ?? 0) !== (want[i] ?? 0)) return (have[i] ?? 0) > (want[i] ?? 0);
  return true;
}

/** "N passed" from a Jest or Vitest run's summary. */
function testCount(output) {
  const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
  const jest = /Tests:\s+(.*?passed[^\n]*)/.exec(plain);
  if (jest) return jest[1].trim();
  const vitest = /Tests\s+(\d+ passed[^\n]*)/.exec(plain);
  if (vitest) return vitest[1].trim();
  throw new Error(`no test summary in the runner's output:\n${plain.trim().slice(-2000)}`);
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
    const nodes = await nodeBinaries();
    console.log(`[consumers] Node binaries: ${nodes.map((node) => node.label).join(', ')}`);
    const ready = packTarball(work).then(async (pack) => {
      console.log(
        `[consumers] packed ${pack.tarball} (${pack.files} files, ${(pack.size / 1000).toFixed(0)} kB, ${(pack.unpackedSize / 1000).toFixed(0)} kB unpacked) in ${((Date.now() - started) / 1000).toFixed(1)}s; node ${process.version}`,
      );
      // One simulator for every app, each app with its own key (its own account), from the packed build.
      const { PaymentsSimulator } = await import(
        pathToFileURL(join(work, 'package', 'dist', 'esm', 'testing', 'index.js')).href
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
          const result = await runApp(name, ready, work, nodes);
          passed += 1;
          const runner = result.versions.jest ? `Jest ${result.versions.jest}` : `Vitest ${result.versions.vitest}`;
          console.log(
            `PASS ${name} (Nest ${result.versions.nest}, TypeScript ${result.versions.typescript}, ${runner}; ${result.seconds.toFixed(1)}s: ${result.steps.join(', ')})\n` +
              `  ${result.summary}\n  [W11] misspelt event name refused: ${result.refused}` +
              (result.engines.length > 0
                ? `\n  npm install warned EBADENGINE (Node ${process.version}) for: ${result.engines.join(', ')}`
                : ''),
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
