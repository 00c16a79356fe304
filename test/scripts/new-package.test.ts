import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const SCRIPT = path.join(__dirname, '..', '..', 'scripts', 'new-package.js');

describe('scripts/new-package.js', () => {
  let root: string;
  const run = (...args: string[]) => spawnSync(process.execPath, [SCRIPT, ...args, '--root', root], { encoding: 'utf8' });
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'er-newpkg-'));
    fs.mkdirSync(path.join(root, 'packages/core'), { recursive: true });
    fs.writeFileSync(path.join(root, 'packages/core/package.json'), JSON.stringify({ name: '@entity-records/core', version: '1.2.3' }));
    fs.writeFileSync(
      path.join(root, 'tsconfig.build.json'),
      JSON.stringify({ files: [], references: [{ path: 'packages/core' }, { path: 'examples/pim' }] }),
    );
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('creates the shared package layout and builds it before the examples', () => {
    const result = run('audit-log', '--description', 'Keeps an audit log.');
    expect(result.status).toBe(0);
    const dir = path.join(root, 'packages/audit-log');
    for (const file of ['package.json', 'tsconfig.json', 'README.md', 'src/index.ts', 'src/declarations.ts', 'test/index.test.ts']) {
      expect(fs.existsSync(path.join(dir, file))).toBe(true);
    }
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    expect(pkg).toMatchObject({
      name: '@entity-records/audit-log',
      version: '1.2.3',
      description: 'Keeps an audit log.',
      peerDependencies: { '@entity-records/core': '1.2.3' },
      devDependencies: { '@entity-records/core': '1.2.3' },
    });
    expect(fs.readFileSync(path.join(dir, 'src/index.ts'), 'utf8')).toMatch(/export default definePlugin<AuditLogOptions \| undefined>\(\{\n {2}name: '@entity-records\/audit-log'/);
    // Installed from tarballs until the packages are published (npm install @entity-records/… would 404).
    const readme = fs.readFileSync(path.join(dir, 'README.md'), 'utf8');
    expect(readme).toContain('npm pack -w packages/core -w packages/audit-log --pack-destination ../tarballs');
    expect(readme).toContain('npm install ../tarballs/entity-records-core-1.2.3.tgz ../tarballs/entity-records-audit-log-1.2.3.tgz');
    expect(readme).toContain('Once published: `npm install @entity-records/core @entity-records/audit-log`.');
    const build = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8'));
    expect(build.references).toEqual([{ path: 'packages/core' }, { path: 'packages/audit-log' }, { path: 'examples/pim' }]);
  });

  it('refuses a bad name and an existing package, writing nothing', () => {
    expect(run('Bad_Name').status).toBe(2);
    expect(fs.readdirSync(path.join(root, 'packages'))).toEqual(['core']);
    expect(run('core').status).toBe(1);
    expect(JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8')).references).toHaveLength(2);
  });
});
