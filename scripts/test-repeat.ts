/**
 * `npm run test:repeat -- <test files...> [--times N]`: runs the chosen integration files N times
 * in a row (default 5), each run a fresh jest, and prints the failures per test. A test that
 * fails by chance is a defect: this is how it is found before CI finds it. Exits 1 when any run
 * failed. Build first (`npm run build`): the end-to-end tests start the compiled services.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

interface JestReport {
  numFailedTests: number;
  numPassedTests: number;
  testResults: Array<{
    name: string;
    message: string;
    assertionResults: Array<{ fullName: string; status: string; failureMessages: string[] }>;
  }>;
}

function parseArgs(argv: string[]): { files: string[]; times: number } {
  const files: string[] = [];
  let times = 5;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--times') times = Number(argv[++i]);
    else files.push(argv[i]!);
  }
  if (files.length === 0 || !Number.isInteger(times) || times < 1) {
    process.stderr.write('usage: npm run test:repeat -- <test files...> [--times N]\n');
    process.exit(2);
  }
  return { files, times };
}

const { files, times } = parseArgs(process.argv.slice(2));
const out = mkdtempSync(path.join(os.tmpdir(), 'test-repeat-'));
const failures = new Map<string, string[]>();
/** Each failing test's first failure, in a line: what to look at first. */
const firstFailure = new Map<string, string>();
let failedRuns = 0;

for (let run = 1; run <= times; run++) {
  const report = path.join(out, `run-${run}.json`);
  const started = Date.now();
  spawnSync(
    process.execPath,
    [
      'node_modules/jest/bin/jest.js',
      '--selectProjects',
      'integration',
      '--runInBand',
      '--json',
      `--outputFile=${report}`,
      '--runTestsByPath',
      ...files,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  let result: JestReport;
  try {
    result = JSON.parse(readFileSync(report, 'utf8')) as JestReport;
  } catch {
    failedRuns += 1;
    failures.set('(jest did not report)', [
      ...(failures.get('(jest did not report)') ?? []),
      `run ${run}`,
    ]);
    continue;
  }
  const failedHere: string[] = [];
  for (const file of result.testResults) {
    // A file that failed to run at all (a syntax error, a hook that threw) has no assertions.
    if (file.assertionResults.length === 0 && file.message)
      failedHere.push(`${file.name}: ${file.message.split('\n')[0]}`);
    for (const test of file.assertionResults) {
      if (test.status !== 'failed') continue;
      failedHere.push(test.fullName);
      if (!firstFailure.has(test.fullName))
        firstFailure.set(test.fullName, summary(test.failureMessages[0] ?? ''));
    }
  }
  for (const name of failedHere) failures.set(name, [...(failures.get(name) ?? []), `run ${run}`]);
  if (failedHere.length > 0) failedRuns += 1;
  process.stderr.write(
    `[test:repeat] run ${run}/${times}: ${result.numPassedTests} passed, ${failedHere.length} failed (${Math.round((Date.now() - started) / 1000)} s)\n`,
  );
}
rmSync(out, { recursive: true, force: true });

process.stdout.write(`\n${times} runs of ${files.join(' ')}: ${failedRuns} with failures\n`);
for (const [name, runs] of failures) {
  process.stdout.write(`  ${runs.length}/${times}  ${name}  (${runs.join(', ')})\n`);
  const first = firstFailure.get(name);
  if (first) process.stdout.write(`        first: ${first}\n`);
}
process.exit(failedRuns > 0 ? 1 : 0);

/** A failure message's assertion and its expected/received lines, colours removed, in one line. */
function summary(message: string): string {
  // eslint-disable-next-line no-control-regex
  const plain = message.replace(/\u001b\[[0-9;]*m/g, '');
  const lines = plain
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('at '));
  return lines.slice(0, 4).join(' | ').slice(0, 400);
}
