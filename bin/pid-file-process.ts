import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { waitFor } from '@screenfleet/runtime';

/**
 * A server started detached, its PID written to `pidFile`: it outlives the process that started
 * it (jest's global setup, a launcher run), and any process can stop it by the file (a test
 * worker killing it as a crash would, the next launcher run taking over its data directory).
 */
export function startPidFileProcess(options: {
  command: string;
  args: string[];
  pidFile: string;
  /** The server's environment; this process's when absent. */
  env?: NodeJS.ProcessEnv;
}): void {
  const child = spawn(options.command, options.args, {
    stdio: 'ignore',
    detached: true,
    ...(options.env ? { env: options.env } : {}),
  });
  child.unref();
  writeFileSync(options.pidFile, String(child.pid));
}

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Signals the process `pidFile` names (SIGTERM: a clean stop; SIGKILL: a crash) and waits until
 * it is gone; resolves at once when it already was.
 */
export async function stopPidFileProcess(
  pidFile: string,
  signal: NodeJS.Signals,
  options: { name: string; timeoutMs: number },
): Promise<void> {
  const pid = Number(readFileSync(pidFile, 'utf8'));
  try {
    process.kill(pid, signal);
  } catch {
    return; // already gone
  }
  await waitFor(() => !isRunning(pid), {
    timeoutMs: options.timeoutMs,
    intervalMs: 25,
    what: `${options.name} (pid ${pid}) to stop`,
  });
}
