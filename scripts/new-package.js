#!/usr/bin/env node
// Creates a plugin package with the layout every package of the repository shares:
//   node scripts/new-package.js <name> [--description "…"] [--root <repository root>]
// then `npm install` links it into the workspace.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

function option(args, name, fallback) {
  const at = args.indexOf(`--${name}`);
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1] : fallback;
}

const camel = (name) => name.replace(/-([a-z0-9])/g, (_, c) => c.toUpperCase());

function files(name, description, coreVersion) {
  const pkg = `@entity-records/${name}`;
  return {
    'package.json': `${JSON.stringify(
      {
        name: pkg,
        version: coreVersion,
        description,
        license: 'MIT',
        main: 'dist/index.js',
        types: 'dist/index.d.ts',
        files: ['dist', 'README.md'],
        engines: { node: '>=20.19' },
        peerDependencies: { '@entity-records/core': coreVersion },
        devDependencies: { '@entity-records/core': coreVersion },
      },
      null,
      2,
    )}\n`,
    'tsconfig.json': `${JSON.stringify(
      {
        extends: '../../tsconfig.base.json',
        compilerOptions: { rootDir: 'src', outDir: 'dist' },
        include: ['src'],
        references: [{ path: '../core' }],
      },
      null,
      2,
    )}\n`,
    'src/declarations.ts': `/** Options of ${pkg}. */\nexport interface ${camel(name).replace(/^./, (c) => c.toUpperCase())}Options {}\n`,
    'src/index.ts': [
      `import { definePlugin } from '@entity-records/core';`,
      `import type { ${camel(name).replace(/^./, (c) => c.toUpperCase())}Options } from './declarations';`,
      '',
      `export type * from './declarations';`,
      '',
      `/** ${description} */`,
      `export default definePlugin<${camel(name).replace(/^./, (c) => c.toUpperCase())}Options | undefined>({`,
      `  name: '${pkg}',`,
      `  dependencies: ['@entity-records/core'],`,
      `  setup(_api, _options) {`,
      `    // Entities, record hooks, routes and OpenAPI fragments are registered here.`,
      `  },`,
      `});`,
      '',
    ].join('\n'),
    'test/index.test.ts': [
      `import { createEntityApi } from '@entity-records/core';`,
      `import plugin from '@entity-records/${name}';`,
      '',
      `describe('${pkg}', () => {`,
      `  it('registers with an instance', async () => {`,
      `    const api = createEntityApi({ database: 'sqlite::memory:', entities: [], plugins: [plugin] });`,
      `    await api.ready();`,
      `    await api.close();`,
      `  });`,
      `});`,
      '',
    ].join('\n'),
    'README.md': [
      `# ${pkg}`,
      '',
      description,
      '',
      '## Install',
      '',
      'The packages are not on the npm registry yet. Until they are, make tarballs in a clone of the',
      'repository and install those (see [installing the packages](../../README.md#installing-the-packages)):',
      '',
      '```sh',
      '# in the repository',
      'npm ci && npm run build',
      `npm pack -w packages/core -w packages/${name} --pack-destination ../tarballs`,
      '# in your project',
      `npm install ../tarballs/entity-records-core-${coreVersion}.tgz ../tarballs/entity-records-${name}-${coreVersion}.tgz`,
      '```',
      '',
      `Once published: \`npm install @entity-records/core ${pkg}\`.`,
      '',
      '## Use',
      '',
      '```ts',
      `import ${camel(name)} from '${pkg}';`,
      '',
      `const api = createEntityApi({ database: 'sqlite:data/app.db', entities, plugins: [${camel(name)}] });`,
      '```',
      '',
      'See [writing a plugin](../../docs/guide/writing-a-plugin.md).',
      '',
    ].join('\n'),
  };
}

function main(args) {
  const name = args.find((a, i) => !a.startsWith('--') && !(args[i - 1] ?? '').startsWith('--'));
  if (!name || !/^[a-z][a-z0-9-]*$/.test(name)) {
    console.error('usage: node scripts/new-package.js <name: lower-case, digits, dashes> [--description "…"] [--root DIR]');
    return 2;
  }
  const root = path.resolve(option(args, 'root', path.join(__dirname, '..')));
  const dir = path.join(root, 'packages', name);
  if (fs.existsSync(dir)) {
    console.error(`packages/${name} exists already`);
    return 1;
  }
  const corePackage = path.join(root, 'packages/core/package.json');
  if (!fs.existsSync(corePackage)) {
    console.error(`${root} is not the repository root (no packages/core/package.json)`);
    return 1;
  }
  const coreVersion = JSON.parse(fs.readFileSync(corePackage, 'utf8')).version;
  const description = option(args, 'description', `The ${name} plugin of entity-records.`);
  for (const [file, text] of Object.entries(files(name, description, coreVersion))) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  const buildFile = path.join(root, 'tsconfig.build.json');
  const build = JSON.parse(fs.readFileSync(buildFile, 'utf8'));
  const reference = { path: `packages/${name}` };
  // Packages build before the examples that use them.
  const firstExample = build.references.findIndex((r) => r.path.startsWith('examples/'));
  build.references.splice(firstExample < 0 ? build.references.length : firstExample, 0, reference);
  fs.writeFileSync(buildFile, `${JSON.stringify(build, null, 2)}\n`);
  console.log(`created packages/${name}; run \`npm install\` to link it into the workspace`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
