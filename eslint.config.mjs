import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

/** Which project types may depend on which (tags of project.json), for production code. */
const DEP_CONSTRAINTS = [
  { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:service', 'type:shared', 'type:contracts'] },
  // The quick start: an app whose first start also loads the demo data set (libs/datagen).
  { sourceTag: 'type:quickstart', onlyDependOnLibsWithTags: ['type:service', 'type:shared', 'type:contracts'] },
  { sourceTag: 'type:service', onlyDependOnLibsWithTags: ['type:shared', 'type:contracts'] },
  { sourceTag: 'type:shared', onlyDependOnLibsWithTags: ['type:shared', 'type:contracts'] },
  { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: [] },
  { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:shared', 'type:contracts'] },
  {
    sourceTag: 'type:e2e',
    onlyDependOnLibsWithTags: ['type:service', 'type:shared', 'type:contracts', 'type:testing'],
  },
  {
    sourceTag: 'type:tool',
    onlyDependOnLibsWithTags: ['type:tool', 'type:shared', 'type:contracts', 'type:service', 'type:testing'],
  },
];

/** For spec files: the same, except that services' and shared libs' specs may also use the testing lib. */
const SPEC_DEP_CONSTRAINTS = DEP_CONSTRAINTS.map((constraint) =>
  constraint.sourceTag === 'type:service' || constraint.sourceTag === 'type:shared'
    ? { ...constraint, onlyDependOnLibsWithTags: [...constraint.onlyDependOnLibsWithTags, 'type:testing'] }
    : constraint,
);

const moduleBoundaries = (depConstraints) => [
  'error',
  { enforceBuildableLibDependency: false, allow: [], depConstraints },
];

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '**/.data/**', '**/coverage/**', '**/*.js', '**/*.mjs', '**/*.cjs', '!eslint.config.mjs'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@nx/enforce-module-boundaries': moduleBoundaries(DEP_CONSTRAINTS),
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-console': 'off',
    },
  },
  {
    // The testing lib is for tests only: production code may never import it.
    files: ['apps/**/*.ts', 'libs/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*.integration-spec.ts', '**/*.e2e-spec.ts', 'libs/testing/**'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: '@cars/testing', message: 'libs/testing is for tests only.' }] }],
    },
  },
  {
    files: ['**/*.spec.ts', '**/*.integration-spec.ts', '**/*.e2e-spec.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@nx/enforce-module-boundaries': moduleBoundaries(SPEC_DEP_CONSTRAINTS),
    },
  },
);
