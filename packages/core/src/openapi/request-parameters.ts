import type { PresentKind } from '../hooks';
import { PRESENT_KINDS } from '../hooks';
import type { Languages } from '../languages';
import type { RequestParameter } from '../plugin';
import type { MetaCategory } from '../present';
import { param } from './refs';

/** What decides which request parameters the document shows. */
export interface ParameterInput {
  /** Parameters plugins documented. */
  parameters?: readonly RequestParameter[];
  /** The `_meta` categories; `With-Meta` is documented when there is one. */
  metaCategories?: ReadonlyMap<string, MetaCategory>;
  /** `language` is documented when the instance has languages. */
  languages?: Languages;
}

const READS: PresentKind[] = ['list', 'read', 'linked'];

function withMeta(categories: ReadonlyMap<string, MetaCategory>): RequestParameter {
  const names = [...categories.keys()].map((n) => `\`${n}\``).join(', ');
  return {
    name: 'With-Meta',
    in: 'header',
    description: `\`true\` or \`1\` adds \`_meta\` to every record of the response: an object of categories (${names}). Clients ignore categories they do not know.`,
    schema: { type: 'string', enum: ['true', '1'] },
    on: PRESENT_KINDS,
  };
}

function language(languages: Languages): RequestParameter {
  return {
    name: 'language',
    in: 'header',
    description:
      `A language of the instance (${languages.codes.map((c) => `\`${c}\``).join(', ')}; \`main\` is \`${languages.main}\`). ` +
      'Multilingual fields carry their value in that language (the main value where it is empty), and their language variants (`nameDeDE`) are left out. An unknown code is 400.',
    schema: { type: 'string', enum: [...languages.codes, 'main'] },
    on: READS,
  };
}

const FLATTEN_ATTRIBUTES: RequestParameter = {
  name: 'Flatten-Attributes',
  in: 'header',
  description:
    '`true`: attribute values read as virtual fields of the record (keyed by attribute code, or id when it has none) with `attributesDefs`, and an update or create may set them the same way (with `__attributes` to add attributes; generation B also `__attributesToRemove`). The flattened fields are not described here; the attribute endpoints are.',
  schema: { type: 'string', enum: ['true'] },
  on: PRESENT_KINDS,
};

/** The component name of a parameter: `With-Meta` → `WithMeta`, `language` → `Language`. */
export function parameterComponentName(parameter: RequestParameter): string {
  const words = parameter.name.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
}

/** Core's headers (where something reads them), then the plugins'; a plugin's replaces core's of the same name. */
export function documentedParameters(input: ParameterInput): RequestParameter[] {
  const plugins = input.parameters ?? [];
  const core: RequestParameter[] = [
    ...(input.metaCategories?.size ? [withMeta(input.metaCategories)] : []),
    ...(input.languages?.codes.length ? [language(input.languages)] : []),
    FLATTEN_ATTRIBUTES,
  ];
  const replaced = (p: RequestParameter) => plugins.some((q) => q.in === p.in && q.name.toLowerCase() === p.name.toLowerCase());
  return [...core.filter((p) => !replaced(p)), ...plugins];
}

/** `components.parameters` entries of the documented parameters. */
export function parameterComponents(parameters: readonly RequestParameter[]): Record<string, unknown> {
  return Object.fromEntries(
    parameters.map((p) => [
      parameterComponentName(p),
      { name: p.name, in: p.in, required: false, description: p.description, schema: p.schema ?? { type: 'string' } },
    ]),
  );
}

/** `$ref`s of the parameters an operation of this kind takes. */
export function parameterRefs(parameters: readonly RequestParameter[], kind: PresentKind): { $ref: string }[] {
  return parameters.filter((p) => p.on.includes(kind)).map((p) => param(parameterComponentName(p)));
}
