// Shared jest settings: swc transform with decorator metadata, and the workspace path aliases.
const { compilerOptions } = require('./tsconfig.base.json');

const moduleNameMapper = Object.fromEntries(
  Object.entries(compilerOptions.paths).map(([alias, [target]]) => [`^${alias}$`, `<rootDir>/${target}`]),
);

module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: {
    '^.+\\.(ts|js)$': [
      '@swc/jest',
      {
        jsc: {
          target: 'es2022',
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
          keepClassNames: true,
        },
        module: { type: 'commonjs' },
      },
    ],
  },
  // content-disposition (via @fastify/static) ships ESM only; jest's CommonJS loader needs it compiled.
  transformIgnorePatterns: ['/node_modules/(?!content-disposition/)'],
  moduleNameMapper,
  modulePathIgnorePatterns: ['<rootDir>/dist/', '<rootDir>/.data/'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/dist/', '<rootDir>/.data/'],
};
