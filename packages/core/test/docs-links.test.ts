import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const PAGES = [
  ...['docs/guide', 'docs/reference'].flatMap((dir) =>
    fs.existsSync(path.join(ROOT, dir)) ? fs.readdirSync(path.join(ROOT, dir)).filter((f) => f.endsWith('.md')).map((f) => `${dir}/${f}`) : [],
  ),
  ...fs.readdirSync(path.join(ROOT, 'packages')).map((p) => `packages/${p}/README.md`).filter((f) => fs.existsSync(path.join(ROOT, f))),
  'examples/pim/README.md',
  'examples/minimal/README.md',
];

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

function anchors(markdown: string): Set<string> {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, '');
  const headings = [...withoutCode.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1]));
  const explicit = [...withoutCode.matchAll(/<a id="([^"]+)"/g)].map((m) => m[1]);
  return new Set([...headings, ...explicit]);
}

/** Relative links of a page (outside code blocks), as [target file, anchor]. */
function links(markdown: string): [string, string | undefined][] {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...withoutCode.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1])
    .filter((href) => !/^[a-z]+:/i.test(href))
    .map((href) => {
      const [file, anchor] = href.split('#');
      return [file, anchor];
    });
}

describe('documentation links', () => {
  it.each(PAGES.filter((p) => fs.existsSync(path.join(ROOT, p))))('every relative link of %s resolves', (page) => {
    const text = fs.readFileSync(path.join(ROOT, page), 'utf8');
    const broken: string[] = [];
    for (const [file, anchor] of links(text)) {
      const target = file === '' ? path.join(ROOT, page) : path.resolve(path.dirname(path.join(ROOT, page)), file);
      if (!fs.existsSync(target)) {
        broken.push(`${file} (no such file)`);
        continue;
      }
      if (anchor && target.endsWith('.md') && !anchors(fs.readFileSync(target, 'utf8')).has(anchor)) {
        broken.push(`${file}#${anchor} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('covers the pages the docs promise', () => {
    for (const page of ['docs/guide/getting-started.md', 'docs/guide/defining-entities.md', 'docs/guide/querying-lists.md', 'docs/guide/writing-a-plugin.md', 'docs/reference/core.md', 'docs/reference/errors.md', 'docs/reference/lifecycle.md']) {
      expect(fs.existsSync(path.join(ROOT, page))).toBe(true);
    }
  });
});
