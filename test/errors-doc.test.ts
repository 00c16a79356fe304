import fs from 'node:fs';
import path from 'node:path';
import { BOOT_ERROR_CODES, errorStatuses } from '@entity-records/core';
// The first-party plugins declare their codes as they load.
import '@entity-records/files';
import '@entity-records/sharing';

const DOC = path.resolve(__dirname, '../docs/reference/errors.md');
const ERROR_STATUS = Object.fromEntries(errorStatuses());

/** Table rows whose first cell is a code: `| \`CORE_X\` | 400 | cause | fix |`. */
function documentedRows(markdown: string): { code: string; status: string; cells: string[] }[] {
  return markdown
    .split('\n')
    .map((line) => /^\|\s*`([A-Z][A-Z0-9]*_[A-Z0-9_]+)`\s*\|(.*)\|\s*$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => {
      const cells = m[2].split('|').map((c) => c.trim());
      return { code: m[1], status: cells[0], cells };
    });
}

/** Every code-like word in backticks anywhere on the page, prose included (the tables that declare codes, `CORE_ERRORS`, are not codes). */
const mentionedCodes = (markdown: string) => [...markdown.matchAll(/`([A-Z][A-Z0-9]*_[A-Z0-9_]+)`/g)].map((m) => m[1]).filter((name) => !name.endsWith('_ERRORS'));

describe('docs/reference/errors.md', () => {
  const markdown = fs.readFileSync(DOC, 'utf8');
  const rows = documentedRows(markdown);
  const httpCodes = Object.keys(ERROR_STATUS);
  const bootCodes: readonly string[] = BOOT_ERROR_CODES;

  it('lists every declared code (core and first-party plugins) and BOOT_ERROR_CODES, each once', () => {
    const listed = rows.map((r) => r.code);
    expect(listed.filter((c, i) => listed.indexOf(c) !== i)).toEqual([]);
    expect([...listed].sort()).toEqual([...httpCodes, ...bootCodes].sort());
  });

  it('lists no code that no longer exists, in tables or in prose', () => {
    const known = new Set([...httpCodes, ...bootCodes]);
    // Codes start with their package (`CORE_`); other upper-case names (`ERROR_STATUS`) are not codes.
    const prefixes = new Set([...known].map((c) => c.split('_')[0]));
    const stale = mentionedCodes(markdown).filter((c) => prefixes.has(c.split('_')[0]) && !known.has(c));
    expect(stale).toEqual([]);
    expect(rows.filter((r) => !known.has(r.code)).map((r) => r.code)).toEqual([]);
  });

  it('gives each HTTP code the status of ERROR_STATUS, and boot codes none', () => {
    for (const { code, status } of rows) {
      const expected = code in ERROR_STATUS ? String(ERROR_STATUS[code]) : '—';
      expect({ code, status }).toEqual({ code, status: expected });
    }
  });

  it('gives each code a cause and a fix', () => {
    for (const { code, cells } of rows) {
      expect({ code, cells: cells.length }).toEqual({ code, cells: 3 });
      expect({ code, cause: cells[1].length > 20 }).toEqual({ code, cause: true });
      expect({ code, fix: cells[2].length > 0 }).toEqual({ code, fix: true });
    }
  });
});
