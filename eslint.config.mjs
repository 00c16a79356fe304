// Lint rules that keep the code base the shape DESIGN.md describes: the layer rules of core
// (knex only in sql/, express only in http/, definition/ free of both), options travelling as
// one object, and generic names that say what they stand for.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const only = (what, where) => ({
  name: what,
  message: `${what} is imported only in ${where} (DESIGN.md, "Inside core").`,
  allowTypeImports: true,
});

const KNEX = only('knex', 'packages/core/src/sql/');
const EXPRESS = only('express', 'packages/core/src/http/');

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'bench/dist/**', '**/*.js', '**/*.cjs', 'test/conformance/client/pim-api.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // Options travel as one object (STYLE.md §4).
      'max-params': ['error', 3],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/naming-convention': [
        'error',
        // TRecord, TEntity, TOptions; `$Definition` for a definition carried as a type.
        { selector: 'typeParameter', format: ['PascalCase'], custom: { regex: '^(T[A-Z][A-Za-z]*|\\$[A-Z][A-Za-z]*)$', match: true } },
      ],
    },
  },
  {
    files: ['packages/core/src/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths: [KNEX, EXPRESS] }] },
  },
  {
    files: ['packages/core/src/sql/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths: [EXPRESS] }] },
  },
  {
    // app.ts and plugin.ts name the Router type; only http/ builds routers.
    files: ['packages/core/src/http/**/*.ts', 'packages/core/src/app.ts', 'packages/core/src/plugin.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths: [KNEX] }] },
  },
  {
    // Express tells error middleware by its arity: it must declare (err, req, res, next).
    files: ['packages/core/src/http/error-handler.ts'],
    rules: { 'max-params': ['error', 4] },
  },
  {
    // Tests may build what they need with any tool; the layer rules are for the library.
    files: ['**/test/**/*.ts', 'bench/**/*.ts'],
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    rules: {
      'max-params': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-unused-expressions': 'off',
      '@typescript-eslint/naming-convention': 'off',
    },
  },
);
