import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  link?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [key: string]: unknown;
}

interface Lock {
  lockfileVersion: number;
  packages: Record<string, LockEntry>;
}

/** Where Node (and npm) finds dependency `name` of the package installed at `at`: the nearest node_modules up. */
function locate(packages: Record<string, LockEntry>, at: string, name: string): string | undefined {
  for (let dir = at; ; ) {
    const candidate = `${dir ? `${dir}/` : ''}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!dir) return undefined;
    const up = dir.lastIndexOf('/node_modules/');
    dir = up < 0 ? '' : dir.slice(0, up);
  }
}

/**
 * A package-lock.json for an app outside the repository, made of the repository's own lock: the
 * same versions and integrity hashes `npm ci` put into npm's cache, so that `npm ci --offline`
 * installs it without asking the registry. The `@entity-records/*` packages come from tarballs.
 * (npm install would ask for full package documents, which the cache of `npm ci` does not hold.)
 */
export function starterLock(options: { root: string; app: Record<string, unknown>; tarballs: Record<string, string>; registry: string }): Lock {
  const source = JSON.parse(fs.readFileSync(path.join(options.root, 'package-lock.json'), 'utf8')) as Lock;
  const packages: Record<string, LockEntry> = {};
  const pending: [at: string, deps: Record<string, string>, optional: boolean][] = [];
  const own = (name: string) => name.startsWith('@entity-records/');
  // With the tarball's address npm takes it from the cache by its integrity, without any package document.
  const registry = options.registry.replace(/\/?$/, '/');
  const tarballUrl = (key: string, version: string) => {
    const name = key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
    return `${registry}${name}/-/${name.split('/').pop()}-${version}.tgz`;
  };
  const add = (key: string, entry: LockEntry) => {
    if (packages[key]) return;
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...rest } = entry as LockEntry & { dev?: unknown; devOptional?: unknown; peer?: unknown };
    packages[key] = rest.resolved || !rest.version ? rest : { ...rest, resolved: tarballUrl(key, rest.version) };
    pending.push([key, entry.dependencies ?? {}, false], [key, entry.optionalDependencies ?? {}, true]);
    const peers = Object.keys(entry.peerDependencies ?? {}).filter((n) => !entry.peerDependenciesMeta?.[n]?.optional);
    pending.push([key, Object.fromEntries(peers.map((n) => [n, entry.peerDependencies?.[n] ?? '*'])), true]);
  };
  for (const [name, file] of Object.entries(options.tarballs)) {
    const manifest = JSON.parse(fs.readFileSync(path.join(options.root, 'packages', name.split('/')[1], 'package.json'), 'utf8')) as LockEntry & { name: string };
    const integrity = `sha512-${createHash('sha512').update(fs.readFileSync(file)).digest('base64')}`;
    add(`node_modules/${name}`, { version: manifest.version, resolved: `file:${file}`, integrity, dependencies: manifest.dependencies, peerDependencies: manifest.peerDependencies });
  }
  const appDeps = { ...(options.app.dependencies as Record<string, string>), ...(options.app.devDependencies as Record<string, string>) };
  pending.push(['', appDeps, false]);
  while (pending.length) {
    const [at, deps, optional] = pending.pop() as [string, Record<string, string>, boolean];
    for (const name of Object.keys(deps)) {
      if (own(name)) continue;
      const key = locate(source.packages, at, name);
      if (!key) {
        if (optional) continue;
        throw new Error(`the repository's lock has no ${name} (needed by ${at || 'the app'})`);
      }
      add(key, source.packages[key]);
    }
  }
  const { name, version, dependencies, devDependencies } = options.app as Record<string, never>;
  return { lockfileVersion: 3, requires: true, packages: { '': { name, version, dependencies, devDependencies }, ...packages } } as unknown as Lock;
}
