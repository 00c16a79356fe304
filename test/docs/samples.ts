import fs from 'node:fs';
import path from 'node:path';

/**
 * A fenced code block of a Markdown file, with the `<!-- sample: … -->` directives of the HTML
 * comments just before it (hidden in the rendered page, read by the sample test). Every
 * TypeScript and JavaScript sample compiles; the directives say in what setting.
 */
export interface Sample {
  file: string;
  line: number;
  lang: string;
  code: string;
  /** `<!-- sample: uses api, token -->`: names the prelude gives the sample. */
  uses: string[];
  /**
   * `<!-- sample: within … -->` (the comment may span lines): the code a fragment (fields of a
   * definition, say) is compiled inside of, the sample taking the place of the one `…`.
   */
  within?: { before: string; after: string };
  /** `<!-- sample: browser -->`: browser code, compiled with the DOM library instead of Node's types. */
  browser: boolean;
  /** `<!-- sample: openapi api.d.ts -->`: the file openapi-typescript writes, next to the sample. */
  openapi?: string;
  /** Directives this extractor does not understand (the test fails on them). */
  unknown: string[];
}

const FENCE = /^```(\w*)\s*$/;
const DIRECTIVE = /^sample:\s*(\w+)\s*[—:-]?\s*([\s\S]*?)\s*$/;

type Directives = Omit<Sample, 'file' | 'line' | 'lang' | 'code'>;

/** What one directive's text adds to a sample. */
function applyDirective(directives: Directives, text: string): void {
  const match = DIRECTIVE.exec(text);
  const [name, rest] = match ? [match[1], match[2]] : ['', text];
  const parts = rest.split('…');
  if (name === 'uses') directives.uses.push(...rest.split(',').map((n) => n.trim()).filter(Boolean));
  else if (name === 'browser') directives.browser = true;
  else if (name === 'openapi' && /^[\w-]+\.d\.ts\b/.test(rest)) directives.openapi = rest.split(/\s/)[0];
  else if (name === 'within' && parts.length === 2) directives.within = { before: parts[0], after: parts[1] };
  else directives.unknown.push(text);
}

/** The `sample:` comment that ends on line `end`, read back to its `<!--`, or undefined. */
function commentEndingAt(lines: string[], end: number): { text: string; start: number } | undefined {
  if (!lines[end].trim().endsWith('-->')) return undefined;
  let start = end;
  while (start > 0 && !lines[start].trimStart().startsWith('<!--')) start--;
  const text = lines.slice(start, end + 1).join('\n').trim().replace(/^<!--/, '').replace(/-->$/, '').trim();
  return text.startsWith('sample:') ? { text, start } : undefined;
}

/** The directives of the comments just before line `fence` (blank lines between allowed). */
function directivesBefore(lines: string[], fence: number): Directives {
  const directives: Directives = { uses: [], browser: false, unknown: [] };
  const texts: string[] = [];
  for (let k = fence - 1; k >= 0; k--) {
    if (lines[k].trim() === '') continue;
    const comment = commentEndingAt(lines, k);
    if (!comment) break;
    texts.unshift(comment.text);
    k = comment.start;
  }
  for (const text of texts) applyDirective(directives, text);
  return directives;
}

/** Every fenced block of a Markdown file, in order. */
export function samplesOf(file: string): Sample[] {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const samples: Sample[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i].trimStart());
    if (!open) continue;
    const indent = lines[i].length - lines[i].trimStart().length;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j]); j++) body.push(lines[j].slice(indent));
    samples.push({ file, line: i + 1, lang: open[1], code: body.join('\n'), ...directivesBefore(lines, i) });
    i = j;
  }
  return samples;
}

/** README.md, docs/**, the packages' and examples' READMEs. */
export function documentationFiles(root: string): string[] {
  const docs = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? docs(path.join(dir, e.name)) : e.name.endsWith('.md') ? [path.join(dir, e.name)] : []));
  const readmes = (dir: string) => fs.readdirSync(path.join(root, dir)).map((p) => path.join(root, dir, p, 'README.md')).filter((f) => fs.existsSync(f));
  return [path.join(root, 'README.md'), ...docs(path.join(root, 'docs')), ...readmes('packages'), ...readmes('examples')];
}
