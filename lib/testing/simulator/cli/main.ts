#!/usr/bin/env node
// The package's `bin` (`npx nestjs-payments simulator ...`): the process around `runSimulatorCli`.
import { runSimulatorCli } from './simulator-cli.js';

void runSimulatorCli(process.argv.slice(2), {
  stdin: process.stdin,
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  onSignal: (stop) => {
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    };
  },
}).then((code) => {
  process.exitCode = code;
  // stdin stays open in a terminal; nothing else should keep the process alive once stopped.
  process.stdin.destroy();
});
