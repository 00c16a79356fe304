import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BootError } from '@entity-records/core';
import { openDatabase } from '../../src/sql/database';

describe('openDatabase', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-db-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['sqlite:<absolute path>', (f: string) => `sqlite:${f}`],
    ['sqlite://<absolute path>', (f: string) => `sqlite://${f}`],
    ['a bare path', (f: string) => f],
  ])('opens a SQLite file from %s, creating its folder, in WAL mode', async (_form, url) => {
    const file = path.join(dir, _form.replace(/\W+/g, '-'), 'nested', 'db.sqlite');
    const db = openDatabase({ url: url(file) });
    try {
      expect(db.dialect.name).toBe('sqlite');
      const [{ journal_mode }] = await db.knex.raw('pragma journal_mode');
      expect(journal_mode).toBe('wal');
      const [{ foreign_keys }] = await db.knex.raw('pragma foreign_keys');
      expect(foreign_keys).toBe(1);
      expect(fs.existsSync(file)).toBe(true);
    } finally {
      await db.close();
    }
  });

  it('keeps one in-memory SQLite database for the life of the instance', async () => {
    for (const url of ['sqlite::memory:', 'sqlite://:memory:']) {
      const db = openDatabase({ url });
      try {
        await db.knex.raw('create table t (a int)');
        await db.knex('t').insert({ a: 1 });
        expect(await db.knex('t').select('a')).toEqual([{ a: 1 }]);
      } finally {
        await db.close();
      }
    }
  });

  it('chooses the PostgreSQL dialect for postgres:// and postgresql:// URLs without connecting', async () => {
    for (const url of ['postgres://u:p@127.0.0.1:1/x', 'postgresql://u:p@127.0.0.1:1/x']) {
      const db = openDatabase({ url });
      expect(db.dialect.name).toBe('postgres');
      await db.close();
    }
  });

  it('refuses other URLs without showing the password', () => {
    expect(() => openDatabase({ url: 'mysql://root:secret@db/app' })).toThrow(BootError);
    expect(() => openDatabase({ url: 'mysql://root:secret@db/app' })).toThrow("unsupported database URL 'mysql://***@db/app'");
    expect(() => openDatabase({ url: 'sqlite:' })).toThrow("database URL 'sqlite:' names no file");
  });
});
