import type Ajv from 'ajv';
import type { ValidateFunction } from 'ajv';

/**
 * `ajv.compile`, once per distinct schema (by its JSON text). Ajv keys what it compiled by the
 * schema object and keeps it for good: every instance a process started compiled its definitions'
 * schemas again, in fresh objects, and the Ajv instance kept them all.
 */
export function compileOnce(ajv: Ajv): (schema: Record<string, unknown>) => ValidateFunction {
  const compiled = new Map<string, ValidateFunction>();
  return (schema) => {
    const text = JSON.stringify(schema);
    let validate = compiled.get(text);
    if (!validate) compiled.set(text, (validate = ajv.compile(schema)));
    return validate;
  };
}
