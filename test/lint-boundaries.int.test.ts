/**
 * The architecture's import boundaries (STYLE.md, eslint.config.mjs) hold in every folder,
 * domain code included: linted with the project's own config, an import that crosses one is an
 * error. Runs the real, type-aware ESLint CLI (its config is ESM, which jest cannot load
 * in-process) over a probe file written beside the domain code for the test and removed after
 * it (ESLint's --stdin did not apply the per-folder rules).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..');

/** The messages of no-restricted-imports for `file`'s code with `imports` put on top. */
function boundaryErrors(file: string, imports: string): string[] {
  const probe = path.join(path.dirname(file), `lint-probe-${process.pid}.ts`);
  writeFileSync(
    path.join(root, probe),
    `${imports}\n${readFileSync(path.join(root, file), 'utf8')}`,
  );
  try {
    const result = spawnSync(
      process.execPath,
      [path.join(root, 'node_modules/eslint/bin/eslint.js'), '--format', 'json', probe],
      { cwd: root, encoding: 'utf8' },
    );
    const [report] = JSON.parse(result.stdout || '[]') as Array<{
      messages: Array<{ ruleId: string | null; message: string }>;
    }>;
    if (!report) throw new Error(`eslint gave no report: ${result.stderr}`);
    return report.messages
      .filter((message) => message.ruleId === 'no-restricted-imports')
      .map((message) => message.message);
  } finally {
    rmSync(path.join(root, probe), { force: true });
  }
}

describe('import boundaries in domain code', () => {
  const domainFile = 'services/ingest-worker/src/domain/micro-batcher.ts';

  it.each([
    ['another service', "import '@screenfleet/gateway';", /never another service/],
    ['a deep import into a lib', "import '@screenfleet/contracts/src/keys';", /no deep imports/],
    ['a driver', "import 'mongodb';", /never imports a driver/],
  ])(
    'when a domain file imports %s, then lint refuses it',
    (_, imports, rule) => {
      expect(boundaryErrors(domainFile, imports)).toEqual([expect.stringMatching(rule)]);
    },
    120_000,
  );

  it('when it imports only what it may, then lint finds no boundary error', () => {
    expect(boundaryErrors(domainFile, '')).toEqual([]);
  }, 120_000);
});
