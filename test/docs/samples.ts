import fs from 'node:fs';
import path from 'node:path';

/** A fenced code block of a Markdown file, with the directive of the HTML comment before it. */
export interface Sample {
  file: string;
  line: number;
  lang: string;
  code: string;
  /** `<!-- sample: partial — why -->`: not compiled, for the reason given. */
  partial?: string;
  /** `<!-- sample: uses api, token -->`: names the prelude gives the sample. */
  uses: string[];
}

const FENCE = /^```(\w*)\s*$/;
const DIRECTIVE = /^<!--\s*sample:\s*(partial|uses)\b\s*[—:-]?\s*(.*?)\s*-->$/;

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
    let previous = i - 1;
    while (previous >= 0 && lines[previous].trim() === '') previous--;
    const directive = previous >= 0 ? DIRECTIVE.exec(lines[previous].trim()) : null;
    samples.push({
      file,
      line: i + 1,
      lang: open[1],
      code: body.join('\n'),
      ...(directive?.[1] === 'partial' && { partial: directive[2] }),
      uses: directive?.[1] === 'uses' ? directive[2].split(',').map((name) => name.trim()).filter(Boolean) : [],
    });
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

/** A shell command with its continuation lines joined. */
export function shellCommands(code: string): string[] {
  return code.replace(/\\\n\s*/g, ' ').split('\n');
}

/** Quoted or bare words of a shell command (enough for curl lines: no nesting beyond $(…)). */
function words(command: string): string[] {
  return command.match(/'[^']*'|"(?:[^"\\]|\\.)*"|\S+/g) ?? [];
}

/**
 * What is wrong with the curl commands of a shell sample: a URL with brackets or braces without
 * `-g` (curl would glob it and print nothing), or `-s` without `-S` (errors would be hidden).
 */
export function curlProblems(code: string): string[] {
  const problems: string[] = [];
  for (const command of shellCommands(code)) {
    for (const part of command.split(/\$\(|\|/).filter((p) => /(^|\s)curl\s/.test(p))) {
      const args = words(part.slice(part.search(/(^|\s)curl\s/)).trim()).slice(1);
      const flags = args.filter((a) => /^-[A-Za-z]+$/.test(a)).join('');
      const urls = args.filter((a, k) => !/^-/.test(a) && !/^-(d|H|F|u|o|X)$|^--data/.test(args[k - 1] ?? '') && /(:\/\/|^["']?\$\w+\/)/.test(a));
      if (urls.some((u) => /[[\]{}]/.test(u)) && !flags.includes('g') && !args.includes('--globoff')) problems.push(`needs -g: ${part.trim()}`);
      if (flags.includes('s') && !flags.includes('S')) problems.push(`-s hides errors (use -sS): ${part.trim()}`);
    }
  }
  return problems;
}
