/**
 * Names for the JIT code in a callgrind dump (`node bench/callgrind.js --jit-names`). Valgrind knows
 * Node's own functions but shows V8's generated code as bare addresses (`???:0x...`); with
 * `--perf-basic-prof` the counted Node writes /tmp/perf-<pid>.map (start, size, name of each code
 * object), and this module gives each address its JavaScript function. The result is instructions by
 * function, exclusive (what the function's own code ran), and by group (our lib, Nest, Fastify, Node's
 * JavaScript, V8's garbage collector, the rest of native code): where two cases' counts differ.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';

/** Where a function's code comes from, tested in order on its name (a JIT name holds its file URL). */
const GROUPS = [
  [
    'gc',
    (name) =>
      /v8::internal::(Mark|Scaveng|Sweep|Evacuat|Heap::|ConcurrentMarking|MinorMark|RememberedSet|LiveObject|BodyDescriptorBase::IteratePointers<v8::internal::(Main|Record|Scaveng|Iterate))/.test(
        name,
      ),
  ],
  [
    'lib (ours)',
    (name) =>
      name.startsWith('JS:') &&
      /\/lib\/(webhooks|core|client|telemetry|errors|testing)\//.test(name) &&
      !name.includes('node_modules'),
  ],
  ['bench route', (name) => name.startsWith('JS:') && name.includes('/bench/lib/')],
  ['@nestjs', (name) => name.startsWith('JS:') && name.includes('node_modules/@nestjs/')],
  [
    'fastify',
    (name) =>
      name.startsWith('JS:') &&
      /node_modules\/(fastify|find-my-way|@fastify|avvio|light-my-request|secure-json-parse)\//.test(name),
  ],
  ['other node_modules', (name) => name.startsWith('JS:') && name.includes('node_modules/')],
  ['node (JS)', (name) => name.startsWith('JS:') && name.includes(' node:')],
  ['other JIT code', (name) => name.startsWith('JS:') || name.startsWith('RegExp:') || name === 'JIT ?'],
  ['native (V8 runtime, builtins, libc, OpenSSL)', () => true],
];

/** The groups' names, in the order `jitProfile` reports them. */
export const JIT_PROFILE_GROUPS = GROUPS.map(([group]) => group);

function perfMap(file) {
  const entries = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [start, size, ...name] = line.split(' ');
      return [Number.parseInt(start, 16), Number.parseInt(size, 16), name.join(' ')];
    })
    .sort((a, b) => a[0] - b[0]);
  return (address) => {
    let lo = 0;
    let hi = entries.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (entries[mid][0] <= address) lo = mid + 1;
      else hi = mid - 1;
    }
    const entry = entries[hi];
    return entry && address < entry[0] + entry[1] ? entry[2] : 'JIT ?';
  };
}

/**
 * Instructions per delivery of `dumpFile` (callgrind's dump of the measured window), by function and
 * by group, JIT addresses named from the perf map of the dump's process (removed afterwards).
 * Undefined when that map is missing (Node ran without `--perf-basic-prof`).
 */
export function jitProfile(dumpFile, deliveries, { top = 150 } = {}) {
  const pid = readFileSync(dumpFile, 'utf8')
    .slice(0, 4000)
    .match(/^pid: (\d+)/m)?.[1];
  const mapFile = `/tmp/perf-${pid}.map`;
  if (pid === undefined || !existsSync(mapFile)) return undefined;
  const nameOf = perfMap(mapFile);
  const annotated = execFileSync('callgrind_annotate', ['--threshold=100', dumpFile], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const byFunction = new Map();
  for (const line of annotated.split('\n')) {
    const match = line.match(/^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$/);
    if (!match || match[2].includes('PROGRAM TOTALS')) continue;
    const address = match[2].match(/^\?\?\?:0x([0-9a-f]+)/);
    const name = address
      ? nameOf(Number.parseInt(address[1], 16))
      : match[2].replace(/^\?\?\?:/, '').replace(/ \[\/usr\/bin\/node\]$/, '');
    byFunction.set(name, (byFunction.get(name) ?? 0) + Number(match[1].replaceAll(',', '')));
  }
  rmSync(mapFile, { force: true });
  const groups = Object.fromEntries(JIT_PROFILE_GROUPS.map((group) => [group, 0]));
  for (const [name, ir] of byFunction) groups[GROUPS.find(([, test]) => test(name))[0]] += ir;
  const perDelivery = (ir) => Math.round(ir / deliveries);
  return {
    groups: Object.fromEntries(Object.entries(groups).map(([group, ir]) => [group, perDelivery(ir)])),
    functions: [...byFunction]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ir]) => [name.slice(0, 200), perDelivery(ir)]),
  };
}
