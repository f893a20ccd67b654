// Lint rules include the architecture of ../shared/STYLE.md: services import libs only, libs
// expose one entry point, and domain code never touches a driver.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const services = ['gateway', 'ingest-worker', 'archive-worker', 'operator-agent'];
const drivers = [
  'amqplib',
  'mongodb',
  'better-sqlite3',
  'libsql',
  '@nut-tree-fork/nut-js',
  'dbus-next',
];

/** Deep imports and relative paths into other packages, refused everywhere. */
const packagePatterns = [
  {
    group: ['@screenfleet/*/*'],
    message: 'Import a package by its name only (no deep imports).',
  },
  {
    group: ['../../libs/*', '../../../libs/*', '../../services/*', '../../../services/*'],
    message: 'Import other packages by name.',
  },
];
const otherServices = (service) =>
  services
    .filter((other) => other !== service)
    .map((other) => ({
      name: `@screenfleet/${other}`,
      message: 'A service imports libs, never another service.',
    }));
const driverPaths = drivers.map((name) => ({
  name,
  message: 'Domain logic never imports a driver: use a port.',
}));
const restrictedImports = (paths, patterns = []) => [
  'error',
  { paths, patterns: [...packagePatterns, ...patterns] },
];
/**
 * The operator agent's domain and entry see the Desktop port alone (src/desktop/desktop.ts):
 * never the Linux adapter, directly or through a module that re-exports it (src/desktop's
 * index, the package's index, open-desktop.ts). The adapter is chosen at composition.
 */
const desktopAdapterPatterns = [
  {
    regex: '(^|/)desktop/linux(/|$)',
    message: 'The domain and entry use the Desktop port (desktop/desktop.ts), never an adapter.',
  },
  {
    regex: '^(\\.\\.?/)*(\\.\\.?|desktop|desktop/index|index|open-desktop)$',
    message: 'This module loads the Linux adapter: import the port, desktop/desktop.ts.',
  },
];

export default tseslint.config(
  {
    ignores: ['**/node_modules/**', '**/dist/**', 'coverage/**', 'tools/**', '**/*.js', '**/*.mjs'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        project: ['./tsconfig.check.json', './services/gateway/console/tsconfig.check.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-restricted-imports': restrictedImports([]),
    },
  },
  // One object per folder with the whole rule: in flat config a later object's options replace
  // an earlier one's for the same rule, so each must carry every boundary that applies.
  ...services.flatMap((service) => [
    {
      files: [`services/${service}/**/*.ts`],
      rules: { 'no-restricted-imports': restrictedImports(otherServices(service)) },
    },
    {
      files: [`services/${service}/src/domain/**/*.ts`],
      rules: {
        'no-restricted-imports': restrictedImports([...otherServices(service), ...driverPaths]),
      },
    },
  ]),
  ...['domain', 'entry'].map((layer) => ({
    files: [`services/operator-agent/src/${layer}/**/*.ts`],
    rules: {
      'no-restricted-imports': restrictedImports(
        [...otherServices('operator-agent'), ...(layer === 'domain' ? driverPaths : [])],
        desktopAdapterPatterns,
      ),
    },
  })),
  {
    files: ['services/operator-agent/src/desktop/**/*.ts'],
    rules: {
      'no-restricted-imports': restrictedImports(otherServices('operator-agent'), [
        {
          regex: '(^|/)(domain|entry)(/|$)',
          message: 'An adapter serves the port: it never imports the domain or an entry point.',
        },
      ]),
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/unbound-method': 'off',
      // Fakes return promises without awaiting, and expect.any() is typed any.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
    },
  },
);
