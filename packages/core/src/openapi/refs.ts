import type { EntityModel } from '../definition/normalize';
import type { Generation } from '../generations';
import type { PresentKind } from '../hooks';

export type { Generation } from '../generations';

export type Operation = Record<string, unknown>;
export type PathItem = Record<string, unknown>;

/** Makes an operationId generation-specific (generation B's get a `v1_` prefix). */
export type OperationId = (id: string) => string;

/**
 * The request parameters (headers such as `With-Meta`) of the operations of one kind, on one
 * entity type when given (`Flatten-Attributes` says so when the type has no attributes).
 */
export type KindParameters = (kind: PresentKind, model?: EntityModel) => { $ref: string }[];

/** What the paths of one generation are made with. */
export interface GenerationContext {
  generation: Generation;
  op: OperationId;
  extra: KindParameters;
}

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const param = (name: string) => ({ $ref: `#/components/parameters/${name}` });
export const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
export const ok = (description: string, schema: unknown) => ({ description, ...json(schema) });
/** A JSON request body that must be sent. */
export const jsonBody = (schema: unknown) => ({ required: true, ...json(schema) });
