// The documentation's curl commands are meant to be pasted: two mistakes make one print nothing
// useful. A URL with brackets or braces is globbed by curl (`where[0]…` then fails with "bad range"
// or fetches something else) unless -g / --globoff is given; -s / --silent without -S /
// --show-error hides curl's own errors (a refused connection prints nothing at all).

/** Short options of curl that take a value: the rest of their cluster, or the next word, is it. */
const SHORT_WITH_VALUE = new Set('dDHFuoXTwreAbcKmxyYzECPQtU'.split(''));
/** Long options of curl that take a value (as the next word, or after `=`). */
const LONG_WITH_VALUE = new Set([
  'data', 'data-raw', 'data-binary', 'data-urlencode', 'data-ascii', 'json', 'header', 'form', 'form-string', 'user', 'output',
  'request', 'upload-file', 'write-out', 'range', 'referer', 'user-agent', 'cookie', 'cookie-jar', 'config', 'max-time',
  'connect-timeout', 'proxy', 'retry', 'dump-header', 'cacert', 'cert', 'key', 'url-query', 'url', 'variable', 'oauth2-bearer',
]);
/** Long options that are a short flag under another name. */
const LONG_AS_SHORT: Record<string, string> = { silent: 's', 'show-error': 'S', globoff: 'g' };

/** A shell command with its continuation lines joined. */
export function shellCommands(code: string): string[] {
  return code.replace(/\\\n\s*/g, ' ').split('\n');
}

/** Quoted or bare words of a shell command (enough for curl lines: no nesting beyond $(…)). */
function words(command: string): string[] {
  return command.match(/(?:'[^']*'|"(?:[^"\\]|\\.)*"|[^\s'"])+/g) ?? [];
}

/** The words of one curl call, up to a comment, a redirection or the end of its command. */
function curlWords(part: string): string[] {
  const all = words(part.slice(part.search(/(^|\s)curl\s/)).trim()).slice(1);
  const end = all.findIndex((w) => /^(#|&&|\|\||;|\)|\d?>)/.test(w));
  return (end < 0 ? all : all.slice(0, end)).map((w) => (/^[^(]*\)$/.test(w) && !/^['"]/.test(w) ? w.slice(0, -1) : w));
}

/** The flags (by their short letter) and the URLs of one curl call: every word that is neither an option nor its value is a URL. */
function parseCurl(args: string[]): { flags: Set<string>; urls: string[] } {
  const flags = new Set<string>();
  const urls: string[] = [];
  for (let k = 0; k < args.length; k++) {
    const word = args[k];
    const long = /^--([\w-]+)(=.*)?$/.exec(word);
    if (long) {
      flags.add(LONG_AS_SHORT[long[1]] ?? `--${long[1]}`);
      if (LONG_WITH_VALUE.has(long[1]) && long[2] === undefined) {
        if (long[1] === 'url' && k + 1 < args.length) urls.push(args[k + 1]);
        k++;
      }
    } else if (/^-[A-Za-z]/.test(word)) {
      for (const [i, letter] of [...word.slice(1)].entries()) {
        flags.add(letter);
        if (!SHORT_WITH_VALUE.has(letter)) continue;
        if (i === word.length - 2) k++; // the value is the next word
        break;
      }
    } else urls.push(word);
  }
  return { flags, urls };
}

/** Whether curl would glob a URL word: brackets or braces left after the shell expands its variables. */
function globbed(url: string): boolean {
  const expanded = url.startsWith("'") ? url : url.replace(/\$\{\w+\}|\$\w+|\$\([^)]*\)/g, 'x');
  return /[[\]{}]/.test(expanded);
}

/**
 * What is wrong with the curl commands of a shell sample: a URL with brackets or braces without
 * `-g` (curl would glob it), or `-s` without `-S` (errors would be hidden).
 */
export function curlProblems(code: string): string[] {
  const problems: string[] = [];
  for (const command of shellCommands(code)) {
    for (const part of command.split(/\$\(|\|(?!\|)/).filter((p) => /(^|\s)curl\s/.test(p))) {
      const { flags, urls } = parseCurl(curlWords(part));
      if (urls.some(globbed) && !flags.has('g')) problems.push(`needs -g: ${part.trim()}`);
      if (flags.has('s') && !flags.has('S')) problems.push(`-s hides errors (use -sS): ${part.trim()}`);
    }
  }
  return problems;
}
