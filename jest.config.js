// `npm test` runs both projects (the global setup runs compiled: `npm test` builds first). Unit specs need nothing; integration and end-to-end specs run
// against the real PostgreSQL and RabbitMQ of this machine, in a database and vhost of their own
// created by the global setup and removed by the global teardown.
const preset = require('./jest.preset');

module.exports = {
  globalSetup: '<rootDir>/dist/libs/testing/src/global-setup.js',
  globalTeardown: '<rootDir>/dist/libs/testing/src/global-teardown.js',
  projects: [
    { ...preset, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs,tools,tests}/**/*.spec.ts'] },
    {
      ...preset,
      displayName: 'integration',
      testMatch: ['<rootDir>/{apps,libs,tools,tests}/**/*.{integration-spec,e2e-spec}.ts'],
      setupFiles: ['<rootDir>/libs/testing/src/integration-env.ts'],
      testTimeout: 60000,
    },
  ],
};
