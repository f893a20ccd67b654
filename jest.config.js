// Two tiers (STYLE.md): unit tests beside the code need no I/O; integration tests under test/
// folders talk to the real RabbitMQ and the real MongoDB-protocol server that globalSetup finds
// or starts. Typechecking is `npm run typecheck`, so ts-jest only transpiles here.
const packages = {
  contracts: 'libs/contracts',
  runtime: 'libs/runtime',
  bus: 'libs/bus',
  storage: 'libs/storage',
  modes: 'libs/modes',
  gateway: 'services/gateway',
  'ingest-worker': 'services/ingest-worker',
  'archive-worker': 'services/archive-worker',
  'operator-agent': 'services/operator-agent',
};
const moduleNameMapper = Object.fromEntries(
  Object.entries(packages).map(([name, dir]) => [`^@screenfleet/${name}$`, `<rootDir>/${dir}/src`]),
);
const transform = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.check.json', diagnostics: false }],
};
const common = { rootDir: __dirname, moduleNameMapper, transform, testEnvironment: 'node' };

module.exports = {
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: [
        '<rootDir>/{libs,services}/*/src/**/*.test.ts',
        // The console's pure modules (services/gateway/console), ES modules that import with .js.
        '<rootDir>/services/gateway/console/src/**/*.test.ts',
      ],
      moduleNameMapper: { ...moduleNameMapper, '^(\\.{1,2}/.*)\\.js$': '$1' },
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: [
        '<rootDir>/{libs,services}/*/test/**/*.int.test.ts',
        '<rootDir>/test/**/*.int.test.ts',
      ],
      globalSetup: '<rootDir>/test/services/global-setup.ts',
      globalTeardown: '<rootDir>/test/services/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/services/integration-timeout.ts'],
    },
  ],
};
