import { afterEach, describe, expect, it } from '@jest/globals';
import { PaymentsConfigurationError, PaymentsInvalidArgumentError } from '../../../lib/index.js';
import { PaymentsSimulator } from '../../../lib/testing/index.js';
import { CliUsageError, parseCliArguments } from '../../../lib/testing/simulator/cli/cli-options.js';
import { runCommandLine } from '../../../lib/testing/simulator/cli/cli-commands.js';
import { SimulatorSession } from '../../../lib/testing/simulator/cli/simulator-session.js';

/*
 * Node's timers wait at most 2^31-1 ms (about 24.8 days); a longer delay is clamped to 1 ms, so the
 * delivery "delayed by a month" arrives at once. Every delay the simulator takes is refused above that
 * bound, naming the valid range: the CLI's `delay` and `--retry-schedule`, and in process
 * `controls.delayDeliveries`, the `retrySchedule` and `deliveryTimeoutMs` options and `waitForIdle`.
 */
const LONGEST = 2_147_483_647;
const RANGE = /from 0 to 2147483647/;

const sessions: SimulatorSession[] = [];
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((session) => session.stop()));
});

async function session(): Promise<SimulatorSession> {
  const request = parseCliArguments(['simulator', '--port', '0']);
  if (request.help) throw new Error('parsed as --help');
  const started = new SimulatorSession(request.options);
  sessions.push(started);
  await started.start();
  return started;
}

describe('the CLI refuses a delay Node cannot wait', () => {
  it('`delay 2147483648` is refused naming the valid range, and no delay is set', async () => {
    const sim = await session();
    const { output } = await runCommandLine('delay 2147483648', sim);
    expect(output).toMatch(RANGE);
    expect(output).toContain('delay <ms> [n]');
    expect(sim.simulator.controls.delayMs).toBe(0);
  });

  it('`delay 99999999999999999999 1` is refused too (not rounded into range)', async () => {
    const sim = await session();
    expect((await runCommandLine('delay 99999999999999999999 1', sim)).output).toMatch(RANGE);
    expect(sim.simulator.controls.delayMs).toBe(0);
  });

  it('`delay 2147483647` (the longest) is accepted', async () => {
    const sim = await session();
    expect((await runCommandLine(`delay ${LONGEST}`, sim)).output).toBe(`delaying every new delivery by ${LONGEST} ms`);
    expect(sim.simulator.controls.delayMs).toBe(LONGEST);
  });

  it('--retry-schedule with a delay above 2147483647 exits with one line naming the flag and the range', () => {
    let refused: unknown;
    try {
      parseCliArguments(['simulator', '--retry-schedule', '1000,2147483648']);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(CliUsageError);
    expect((refused as Error).message).toMatch(/^--retry-schedule .*from 0 to 2147483647/);
  });
});

describe('the in-process simulator refuses a delay Node cannot wait', () => {
  it.each([2 ** 31, Number.POSITIVE_INFINITY])(
    'controls.delayDeliveries(%d) is refused naming ms and the range',
    (ms) => {
      const sim = new PaymentsSimulator();
      expect(() => sim.controls.delayDeliveries(ms)).toThrow(PaymentsInvalidArgumentError);
      expect(() => sim.controls.delayDeliveries(ms)).toThrow(/`ms` must be .*from 0 to 2147483647/);
      expect(sim.controls.delayMs).toBe(0);
    },
  );

  it('controls.delayDeliveries(2147483647) is accepted', () => {
    expect(new PaymentsSimulator().controls.delayDeliveries(LONGEST).delayMs).toBe(LONGEST);
  });

  it('a retrySchedule delay above 2147483647 fails at construction, naming the option and the range', () => {
    expect(() => new PaymentsSimulator({ retrySchedule: [1000, 2 ** 31] })).toThrow(PaymentsConfigurationError);
    expect(() => new PaymentsSimulator({ retrySchedule: [1000, 2 ** 31] })).toThrow(
      /PaymentsSimulator\(\{ retrySchedule \}\).*from 0 to 2147483647/,
    );
  });

  it.each([2 ** 31, 0, -1, Number.NaN])(
    'deliveryTimeoutMs %d fails at construction, naming the option and the range',
    (ms) => {
      expect(() => new PaymentsSimulator({ deliveryTimeoutMs: ms })).toThrow(
        /PaymentsSimulator\(\{ deliveryTimeoutMs \}\).*from 1 to 2147483647/,
      );
    },
  );

  it('waitForIdle({ timeoutMs }) above 2147483647 is refused naming timeoutMs', async () => {
    const sim = new PaymentsSimulator();
    await expect(sim.waitForIdle({ timeoutMs: 2 ** 31 })).rejects.toThrow(/`timeoutMs` must be .*2147483647/);
  });
});
