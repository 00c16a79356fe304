import { BootError } from './errors';

/** `en_US`, `de_DE`, `de`, `zh_Hans`: a lower-case language, optionally `_` and a region or script. */
const LANGUAGE_CODE = /^[a-z]{2,3}(_[A-Z][A-Za-z0-9]{1,3})?$/;

/**
 * The languages of an instance, main first: the one list that core (metadata, the `language`
 * header) and plugins (multilingual fields, attribute values) read.
 *
 * @example
 * const languages = new Languages(['en_US', 'de_DE'])
 * languages.variant('name', 'de_DE') // 'nameDeDE'
 * @see docs/reference/multilang.md
 */
export class Languages {
  /** Every code, main first. */
  readonly codes: readonly string[];
  /** The main language; undefined when the instance has none. */
  readonly main: string | undefined;
  /** Every code but the main one. */
  readonly others: readonly string[];

  constructor(codes: readonly string[] = []) {
    for (const code of codes) {
      if (typeof code !== 'string' || !LANGUAGE_CODE.test(code)) {
        throw new BootError('CORE_CONFIG_INVALID', `language code ${JSON.stringify(code)} must look like en_US or de (${LANGUAGE_CODE.source})`);
      }
    }
    const twice = codes.find((code, i) => codes.indexOf(code) !== i);
    if (twice) throw new BootError('CORE_CONFIG_INVALID', `language '${twice}' is listed twice`);
    this.codes = Object.freeze([...codes]);
    this.main = codes[0];
    this.others = Object.freeze(codes.slice(1));
  }

  has(code: string): boolean {
    return this.codes.includes(code);
  }

  /** The suffix a language gives field names: `de_DE` → `DeDE` (the code without the underscore). */
  suffix(code: string): string {
    const plain = code.replace('_', '');
    return plain.charAt(0).toUpperCase() + plain.slice(1);
  }

  /** The name of a field's variant in a language: `variant('name', 'de_DE')` → `nameDeDE`. */
  variant(field: string, code: string): string {
    return `${field}${this.suffix(code)}`;
  }

  /**
   * The language a `language` header asks for: a configured code, or `main` for the main one;
   * undefined when the value names no language of the instance.
   */
  resolve(value: string): string | undefined {
    if (value === 'main') return this.main;
    return this.has(value) ? value : undefined;
  }
}
