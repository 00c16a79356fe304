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
/** records/ builds no SQL: not even knex's types (sql/ gives it `Transaction`, `QueryBuilder`). */
const NO_KNEX = { name: 'knex', message: 'records/ reaches the database through sql/ only (DESIGN.md, "Inside core").' };

/** A layer that must not reach into another one (relative imports). */
const layer = (folder, why) => ({ group: [`**/${folder}/*`, `**/${folder}`], message: why });

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
    // The one write path and the reads over the SQL: never knex, never express.
    files: ['packages/core/src/records/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { paths: [NO_KNEX, EXPRESS], patterns: [layer('http', 'records/ knows nothing of HTTP.')] }],
    },
  },
  {
    // The SQL under the records layer: it never calls up into it, nor into HTTP.
    files: ['packages/core/src/sql/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { paths: [EXPRESS], patterns: [layer('records', 'sql/ is below records/: it never imports it.'), layer('http', 'sql/ knows nothing of HTTP.')] },
      ],
    },
  },
  {
    // Definitions are pure: no database, no HTTP, no records.
    files: ['packages/core/src/definition/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { paths: [KNEX, EXPRESS], patterns: ['sql', 'records', 'http'].map((f) => layer(f, 'definition/ is pure: it imports no other layer.')) },
      ],
    },
  },
  {
    // app.ts and plugin.ts name the Router type; only http/ builds routers.
    files: ['packages/core/src/http/**/*.ts', 'packages/core/src/app.ts', 'packages/core/src/plugin.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths: [KNEX] }] },
  },
  {
    // Routes reach data through the records layer and the services, never through SQL.
    files: ['packages/core/src/http/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths: [KNEX], patterns: [layer('sql', 'http/ reaches data through records/ and the services.')] }] },
  },
  {
    // Plugins use core's public API only: what a first-party plugin needs, third-party ones need too.
    files: ['packages/*/src/**/*.ts'],
    ignores: ['packages/core/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@entity-records/core/*', '**/core/src/**'], message: "Plugins import '@entity-records/core' only (its public API)." }] },
      ],
    },
  },
  {
    // Express tells error middleware by its arity: it must declare (err, req, res, next).
    files: ['packages/core/src/http/error-handler.ts', 'packages/sharing/src/public-link.ts'],
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
