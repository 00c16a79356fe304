/** One jest run for every package, example and cross-package test. */
module.exports = {
  testEnvironment: 'node',
  // Sources are TypeScript: a stray compiled .js beside a .ts must never shadow it.
  moduleFileExtensions: ['ts', 'js', 'json', 'node'],
  roots: ['<rootDir>/packages', '<rootDir>/test', '<rootDir>/examples'],
  testMatch: ['**/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }] },
  moduleNameMapper: { '^@entity-records/([a-z-]+)$': '<rootDir>/packages/$1/src' },
  testTimeout: 30000,
  maxWorkers: 2,
};
