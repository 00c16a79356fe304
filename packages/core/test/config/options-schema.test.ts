import path from 'node:path';
import ts from 'typescript';
import { OPTIONS_SCHEMA } from '../../src/options-check';

// createEntityApi refuses an unknown option by OPTIONS_SCHEMA (options-check.ts), and TypeScript
// users write options against the EntityApiOptions interface (app-types.ts). An option added to
// one and not the other is refused at run time although it type-checks, or accepted and never
// typed. This reads the interface with the compiler and compares the keys at every level.

const APP_TYPES = path.join(__dirname, '../../src/app-types.ts');

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
}

/** The compiler's view of app-types.ts: its checker and the EntityApiOptions declaration. */
function entityApiOptions(): { checker: ts.TypeChecker; declaration: ts.InterfaceDeclaration } {
  const program = ts.createProgram([APP_TYPES], { strict: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10, esModuleInterop: true, skipLibCheck: true, noEmit: true, types: ['node'] });
  const source = program.getSourceFile(APP_TYPES);
  const declaration = source?.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'EntityApiOptions');
  if (!declaration) throw new Error('EntityApiOptions not found in app-types.ts');
  return { checker: program.getTypeChecker(), declaration };
}

/** A plain object type whose keys are options (not a function, an array or a type parameter). */
function optionObject(checker: ts.TypeChecker, type: ts.Type): boolean {
  return (type.flags & ts.TypeFlags.Object) !== 0 && type.getCallSignatures().length === 0 && !checker.isArrayLikeType(type) && checker.getPropertiesOfType(type).length > 0;
}

/**
 * The keys found on one side only, as `only in …: a.b`, at every level where the schema lists
 * properties: there the type must be an object of the same keys.
 */
function drift(checker: ts.TypeChecker, at: ts.Node, type: ts.Type, schema: SchemaNode, prefix = ''): string[] {
  const typed = new Map(checker.getPropertiesOfType(type).map((p) => [p.name, p]));
  const listed = Object.keys(schema.properties ?? {});
  const found = [
    ...[...typed.keys()].filter((k) => !listed.includes(k)).map((k) => `only in EntityApiOptions: ${prefix}${k}`),
    ...listed.filter((k) => !typed.has(k)).map((k) => `only in OPTIONS_SCHEMA: ${prefix}${k}`),
  ];
  for (const key of listed.filter((k) => typed.has(k))) {
    const inner = schema.properties?.[key] as SchemaNode;
    const innerType = checker.getNonNullableType(checker.getTypeOfSymbolAtLocation(typed.get(key) as ts.Symbol, at));
    if (inner.properties === undefined) continue;
    if (!optionObject(checker, innerType)) found.push(`OPTIONS_SCHEMA lists keys of ${prefix}${key}, EntityApiOptions types it ${checker.typeToString(innerType)}`);
    else found.push(...drift(checker, at, innerType, inner, `${prefix}${key}.`));
  }
  return found;
}

describe('the options schema and the EntityApiOptions interface', () => {
  const { checker, declaration } = entityApiOptions();
  const type = checker.getTypeAtLocation(declaration);

  it('list the same options, nested ones included', () => {
    expect(drift(checker, declaration, type, OPTIONS_SCHEMA as SchemaNode)).toEqual([]);
  });

  it('would be told apart when one side gains or loses an option', () => {
    const schema = OPTIONS_SCHEMA as { properties: Record<string, SchemaNode> };
    const { poolSize: _dropped, ...properties } = schema.properties;
    const webhooks = { properties: { ...schema.properties.webhooks.properties, retries: {} } };
    expect(drift(checker, declaration, type, { properties: { ...properties, webhooks } })).toEqual(['only in EntityApiOptions: poolSize', 'only in OPTIONS_SCHEMA: webhooks.retries']);
  });
});
