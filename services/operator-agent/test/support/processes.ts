import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { waitFor } from '@screenfleet/runtime';

/** A process the harness started; stop() ends it and whatever it spawned, by PID only. */
export interface StartedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** The last lines it wrote on stderr/stdout, for error messages. */
  output(): string;
}

export function startProcess(
  name: string,
  command: string,
  args: string[],
  options: SpawnOptions,
): StartedProcess {
  // detached: its own process group, so a terminal's Ctrl+C reaches jest first and stop()
  // decides the order; stdin ignored so no child waits on the test's terminal.
  const child = spawn(command, args, {
    ...options,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const keep = (chunk: Buffer): void => {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.on('error', (error) => lines.push(`spawn failed: ${error.message}`));
  return { name, child, output: () => lines.join('\n') };
}

/**
 * Polls `check` until it returns a value (not undefined, null or false: runtime's waitFor), or
 * throws after timeoutMs; a check that throws counts as not yet (the error is named if time
 * runs out).
 */
export async function waitUntil<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  intervalMs = 25,
): Promise<T> {
  let lastError: unknown;
  return waitFor(
    async () => {
      try {
        return await check();
      } catch (error) {
        lastError = error;
        return undefined;
      }
    },
    {
      timeoutMs,
      intervalMs,
      what: () => what + (lastError instanceof Error ? ` (last error: ${lastError.message})` : ''),
    },
  );
}

/** PIDs of every live descendant of `pid`, read from /proc (children first found, then theirs). */
export function descendantsOf(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name may contain spaces and parentheses: the ppid follows the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parentOf.set(Number(entry), Number(fields[1]));
    } catch {
      // The process ended while we listed: nothing to stop.
    }
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const current = queue.shift() as number;
    for (const [child, parent] of parentOf) {
      if (parent === current && !found.includes(child)) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Ends a started process and its descendants: SIGTERM, then SIGKILL for whatever is left after
 * graceMs. Only these PIDs are signalled, never a name pattern: other desktops may be running.
 */
export async function stopProcess(started: StartedProcess, graceMs = 2000): Promise<void> {
  const pid = started.child.pid;
  if (pid === undefined) return;
  const pids = [pid, ...descendantsOf(pid)];
  const signal = (sig: NodeJS.Signals): void => {
    for (const target of pids) {
      try {
        process.kill(target, sig);
      } catch {
        // Already gone.
      }
    }
  };
  signal('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && pids.some(isAlive)) await sleep(25);
  if (pids.some(isAlive)) signal('SIGKILL');
  started.child.stdout?.destroy();
  started.child.stderr?.destroy();
}

/** True when `command` exits 0 (used for xdpyinfo and friends). */
export function succeeds(command: string, args: string[], env: NodeJS.ProcessEnv): boolean {
  const result = spawnSync(command, args, { env, stdio: 'ignore', timeout: 5000 });
  return result.status === 0;
}
