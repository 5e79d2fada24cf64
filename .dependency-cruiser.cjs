// The import rules of lib/, checked by dependency-cruiser: `npm run deps:check` (CI), and
// `npm run deps:graph` prints which folder imports which. test/unit/deps-graph.spec.ts builds a small tree
// that breaks each rule and checks that the rule fires, so a rule cannot silently stop matching.
//
// One more rule of the receiver's layout is not about imports and lives in eslint.config.js:
// lib/webhooks/contracts/ holds declarations only (no function or class body).

/** Dependency types of packages and Node built-ins: the rules below are about the library's own files. */
const PACKAGES = ['core', 'npm', 'npm-dev', 'npm-peer', 'npm-optional', 'npm-bundled', 'npm-no-pkg', 'npm-unknown'];

/**
 * The areas of lib/ (its first-level folders), lowest first. An area imports only areas listed before it,
 * so no cycle can join two areas (whatever its length). Areas on one line import neither each other nor
 * themselves across the line. A new import that goes up this list is either a cycle in the making or
 * a change of layering: move the area (one line here) in the same commit, reviewed as such.
 */
const LAYERS = [
  ['core'],
  ['errors'],
  ['telemetry'],
  ['postgres'],
  ['client'],
  ['webhooks'],
  ['health', 'testing', 'serverless'],
  ['brokers'],
];
// The files at the root of lib/ (the module, its options and wiring) come above every area: no area imports them.

/** The receiver's plug-ins: they reach the dispatcher through `PaymentsDispatchPlugin` only. */
const PLUG_INS = '(stores|verifiers|queue|transactional|journal|reconcile)';

const layerRules = LAYERS.flatMap((line, rank) => {
  const below = LAYERS.slice(0, rank).flat();
  return line.map((area) => ({
    name: 'area-layers',
    comment:
      `lib/${area} imports only ${below.length ? below.map((name) => `lib/${name}`).join(', ') : 'itself'} ` +
      '(the areas below it in LAYERS of .dependency-cruiser.cjs): no cycle between areas.',
    severity: 'error',
    from: { path: `^lib/${area}/` },
    to: {
      path: '^lib/',
      pathNot: `^lib/(${[area, ...below].join('|')})/`,
    },
  }));
});

/** A folder of lib/ that LAYERS does not list: its imports, either way, cannot be checked for cycles. */
const UNLISTED = `^lib/(?!(${LAYERS.flat().join('|')})/)[^/]+/`;
const unlistedRules = [
  { from: { path: UNLISTED }, to: { path: '^lib/' } },
  { from: { path: '^lib/' }, to: { path: UNLISTED } },
].map((ends) => ({
  name: 'area-unlisted',
  comment: 'A new folder of lib/ is an area: add it to LAYERS in .dependency-cruiser.cjs, at its place.',
  severity: 'error',
  ...ends,
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-file-cycle',
      comment:
        'No two files of lib/ import each other, directly or through others, type-only imports included: ' +
        'a type shared by two files goes in a third both import.',
      severity: 'error',
      from: { path: '^lib/' },
      to: { circular: true },
    },
    ...layerRules,
    ...unlistedRules,
    {
      name: 'area-layers',
      comment: 'The files at the root of lib/ are the wiring: no area of lib/ imports them.',
      severity: 'error',
      from: { path: '^lib/[^/]+/' },
      to: { path: '^lib/[^/]+$' },
    },
    {
      name: 'core-imports-nothing',
      comment: 'lib/core imports nothing of the library (packages and Node built-ins only).',
      severity: 'error',
      from: { path: '^lib/core/' },
      to: { pathNot: '^lib/core/', dependencyTypesNot: PACKAGES },
    },
    {
      name: 'client-never-imports-receiver',
      comment:
        'The API client (lib/client) never imports the receiver (lib/webhooks): an app may use one without the other.',
      severity: 'error',
      from: { path: '^lib/client/' },
      to: { path: '^lib/webhooks/' },
    },
    {
      name: 'postgres-imports-core-errors',
      comment: 'lib/postgres (the SQL helpers the store and the inbox share) imports only lib/core and lib/errors.',
      severity: 'error',
      from: { path: '^lib/postgres/' },
      to: { pathNot: '^lib/(postgres|core|errors)/', dependencyTypesNot: PACKAGES },
    },
    {
      name: 'receiver-no-arrow-back-up',
      comment:
        'No subfolder of lib/webhooks imports the files at its root (the wiring: module, providers, plug-in list).',
      severity: 'error',
      from: { path: '^lib/webhooks/[^/]+/' },
      to: { path: '^lib/webhooks/[^/]+$' },
    },
    {
      name: 'receiver-contracts-import-nothing',
      comment:
        'lib/webhooks/contracts imports nothing else of lib/webhooks (only core, errors and client types); ' +
        'and it holds declarations only (eslint.config.js).',
      severity: 'error',
      from: { path: '^lib/webhooks/contracts/' },
      to: { path: '^lib/webhooks/', pathNot: '^lib/webhooks/contracts/' },
    },
    {
      name: 'receiver-support-imports-contracts',
      comment: "lib/webhooks/support (the receiver's own helpers) imports only contracts/ of lib/webhooks.",
      severity: 'error',
      from: { path: '^lib/webhooks/support/' },
      to: { path: '^lib/webhooks/', pathNot: '^lib/webhooks/(support|contracts)/' },
    },
    {
      name: 'receiver-log-imports-contracts',
      comment:
        "lib/webhooks/log (the receiver's logger and log sampler, used by every part and plug-in) imports only " +
        'contracts/ of lib/webhooks.',
      severity: 'error',
      from: { path: '^lib/webhooks/log/' },
      to: { path: '^lib/webhooks/', pathNot: '^lib/webhooks/(log|contracts)/' },
    },
    {
      name: 'receiver-records-import-contracts',
      comment:
        "lib/webhooks/records (an intent's record: its keys and rules, shared by the dispatcher and every store) " +
        'imports only contracts/ of lib/webhooks.',
      severity: 'error',
      from: { path: '^lib/webhooks/records/' },
      to: { path: '^lib/webhooks/', pathNot: '^lib/webhooks/(records|contracts)/' },
    },
    {
      name: 'receiver-plug-ins-import-contracts-support',
      comment: `The plug-ins (lib/webhooks/${PLUG_INS}) import only contracts/, records/, log/, support/ and stores/ (the engines a plug-in keeps its state in, e.g. reconciliation's default watch list) of lib/webhooks.`,
      severity: 'error',
      from: { path: `^lib/webhooks/${PLUG_INS}/` },
      to: { path: '^lib/webhooks/', pathNot: '^lib/webhooks/($1|contracts|records|log|support|stores)/' },
    },
    {
      name: 'receiver-dispatcher-imports-no-plug-in',
      comment:
        'The dispatcher (lib/webhooks/dispatch) imports no plug-in: plug-ins reach it through PaymentsDispatchPlugin.',
      severity: 'error',
      from: { path: '^lib/webhooks/dispatch/' },
      to: { path: `^lib/webhooks/${PLUG_INS}/` },
    },
    {
      name: 'receiver-no-folder-cycle',
      comment: 'No cycle, of any length, joins the subfolders of lib/webhooks.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^lib/webhooks/[^/]+' },
      to: { path: '^lib/webhooks/[^/]+', circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'Every import of lib/ resolves (a misspelt relative path would hide from the rules above).',
      severity: 'error',
      from: { path: '^lib/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Type-only imports (`import type`, `export type ... from`) count: a type-only circle is still two
    // files that cannot be read apart.
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/' },
    reporterOptions: {
      text: { highlightFocused: false },
    },
  },
};
