/**
 * The architecture's import boundaries (STYLE.md, eslint.config.mjs) hold in every folder,
 * domain code included: linted with the project's own config, an import that crosses one is an
 * error. Runs the real, type-aware ESLint CLI (its config is ESM, which jest cannot load
 * in-process) over probe files written beside the code for the test and removed after it
 * (ESLint's --stdin did not apply the per-folder rules). One ESLint run lints every probe: each
 * run builds the whole program's types first (about 7 s here), which one probe a run paid again.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..');

interface Probe {
  /** Names the case. */
  name: string;
  /** The file whose code the probe copies, under the imports put on top. */
  file: string;
  imports: string;
  /** The boundary errors expected, by message. */
  expected: RegExp[];
}

const ingestDomain = 'services/ingest-worker/src/domain/grouped-writes.ts';
const agentDomain = 'services/operator-agent/src/domain/press-by-index.ts';
const agentEntry = 'services/operator-agent/src/entry/command.handler.ts';
const agentAdapter = 'services/operator-agent/src/desktop/linux/input/keys.ts';

const probes: Probe[] = [
  {
    name: 'a domain file imports another service',
    file: ingestDomain,
    imports: "import '@screenfleet/gateway';",
    expected: [/never another service/],
  },
  {
    name: 'a domain file makes a deep import into a lib',
    file: ingestDomain,
    imports: "import '@screenfleet/contracts/src/keys';",
    expected: [/no deep imports/],
  },
  {
    name: 'a domain file imports a driver',
    file: ingestDomain,
    imports: "import 'mongodb';",
    expected: [/never imports a driver/],
  },
  {
    name: "the agent's domain imports the Linux desktop adapter",
    file: agentDomain,
    imports: "import '../desktop/linux/linux-desktop';",
    expected: [/never an adapter/],
  },
  {
    name: "the agent's entry imports the desktop barrel that loads the adapter",
    file: agentEntry,
    imports: "import '../desktop';",
    expected: [/loads the Linux adapter/],
  },
  {
    name: 'a desktop adapter imports the domain',
    file: agentAdapter,
    imports: "import '../../../domain/deadline';",
    expected: [/never imports the domain/],
  },
  { name: 'a domain file imports only what it may', file: ingestDomain, imports: '', expected: [] },
  { name: "the agent's domain imports the port", file: agentDomain, imports: '', expected: [] },
];

/** The messages of no-restricted-imports for each probe, linted in one ESLint run. */
function boundaryErrors(): Map<Probe, string[]> {
  const files = probes.map((probe, index) => {
    const file = path.join(path.dirname(probe.file), `lint-probe-${process.pid}-${index}.ts`);
    writeFileSync(
      path.join(root, file),
      `${probe.imports}\n${readFileSync(path.join(root, probe.file), 'utf8')}`,
    );
    return file;
  });
  try {
    const result = spawnSync(
      process.execPath,
      [path.join(root, 'node_modules/eslint/bin/eslint.js'), '--format', 'json', ...files],
      { cwd: root, encoding: 'utf8' },
    );
    const reports = JSON.parse(result.stdout || '[]') as Array<{
      filePath: string;
      messages: Array<{ ruleId: string | null; message: string }>;
    }>;
    return new Map(
      probes.map((probe, index) => {
        const report = reports.find((r) => r.filePath === path.join(root, files[index] ?? ''));
        if (!report) throw new Error(`eslint gave no report for ${probe.name}: ${result.stderr}`);
        const messages = report.messages
          .filter((message) => message.ruleId === 'no-restricted-imports')
          .map((message) => message.message);
        return [probe, messages];
      }),
    );
  } finally {
    for (const file of files) rmSync(path.join(root, file), { force: true });
  }
}

describe('import boundaries', () => {
  let errors: Map<Probe, string[]>;
  beforeAll(() => {
    errors = boundaryErrors();
  }, 120_000);

  it.each(probes.map((probe) => [probe.name, probe] as const))(
    'when %s, then lint says exactly the boundaries it crosses',
    (_, probe) => {
      const expected = probe.expected.map((rule): unknown => expect.stringMatching(rule));
      expect(errors.get(probe)).toEqual(expected);
    },
  );
});
