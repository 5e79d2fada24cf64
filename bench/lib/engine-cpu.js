/**
 * CPU time of the data engines on this machine (PostgreSQL backends, redis-server) and of the whole
 * machine, read from /proc (Linux), so a run can say where the cores went beside the receiver: a
 * receiver using half a core while the machine is saturated is bound by what else runs on it.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on Linux (getconf CLK_TCK)
const ENGINES = new Set(['postgres', 'redis-server']);

/** utime + stime (ms) of every live process named postgres or redis-server, by pid, or undefined off Linux. */
function engineCpuByPid() {
  const byPid = new Map();
  let pids;
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      if (!ENGINES.has(comm)) continue;
      const fields = stat.slice(close + 2).split(' ');
      byPid.set(Number(pid), (Number(fields[11]) + Number(fields[12])) * TICK_MS); // utime, stime (fields 14 and 15)
    } catch {
      // the process ended between the listing and the read
    }
  }
  return byPid;
}

const sum = (byPid) => [...byPid.values()].reduce((a, b) => a + b, 0);

/** Busy and total CPU time of the machine (ms, all cores), from the first line of /proc/stat. */
function machineCpuMs() {
  try {
    const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).map(Number);
    const idle = ticks[3] + (ticks[4] ?? 0); // idle + iowait
    const all = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: (all - idle) * TICK_MS, all: all * TICK_MS };
  } catch {
    return undefined;
  }
}

/**
 * Starts a measurement; `stop(wallMs)` answers { engineCpuMs, engineCores, allEnginesCpuMs, machineBusyCores }
 * over the interval. `engineCpuMs` counts only the bench's own engine processes (issue 31): the pids given
 * to `stop` (its private redis-server instances, the PostgreSQL backends of its own connections); with no
 * pids it is undefined. `allEnginesCpuMs` is every postgres and redis-server process on the machine (other
 * tenants, background workers), for comparison.
 */
export function startCpuAccount() {
  const engine = engineCpuByPid();
  const machine = machineCpuMs();
  return {
    /** Ends the interval; `own(pids)` then gives the bench's own engines' share (pids known later). */
    stop(wallMs) {
      const engineEnd = engineCpuByPid();
      const machineEnd = machineCpuMs();
      return {
        allEnginesCpuMs: engine === undefined ? undefined : sum(engineEnd) - sum(engine),
        machineBusyCores: machine === undefined ? undefined : (machineEnd.busy - machine.busy) / wallMs,
        own(ownPids = []) {
          const own =
            engine === undefined || ownPids.length === 0
              ? undefined
              : ownPids.reduce((total, pid) => total + ((engineEnd.get(pid) ?? 0) - (engine.get(pid) ?? 0)), 0);
          return { engineCpuMs: own, engineCores: own === undefined ? undefined : own / wallMs };
        },
      };
    },
  };
}
