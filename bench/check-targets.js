#!/usr/bin/env node
/**
 * Reads bench/results/latest.json (or the file given) and bench/results/instructions.json, and prints
 * pass/miss for each target of issue 15.
 * Informative only: always exits 0 (speed is not asserted in CI).
 *   node bench/check-targets.js [path/to/latest.json]
 */
import { readFileSync } from 'node:fs';
import { evaluateTargets } from './lib/targets.js';

const file = process.argv[2] ?? new URL('./results/latest.json', import.meta.url).pathname;
let results;
try {
  results = JSON.parse(readFileSync(file, 'utf8'));
} catch (error) {
  console.log(`No results to check (${file}: ${error.message}). Run \`npm run bench\` first.`);
  process.exit(0);
}
const instructionsFile = new URL('./results/instructions.json', import.meta.url).pathname;
let instructions;
try {
  instructions = JSON.parse(readFileSync(instructionsFile, 'utf8'));
} catch {
  instructions = undefined;
}
console.log(`Targets, from ${file} (run of ${results.date}, ${results.machine?.cpu}, ${results.machine?.cores} cores)`);
for (const t of evaluateTargets(results, instructions)) {
  const mark = t.pass === null ? 'n/a ' : t.pass ? 'pass' : 'MISS';
  console.log(`  ${mark}  ${t.text}: ${t.value ?? 'not measured'}`);
}
process.exit(0);
