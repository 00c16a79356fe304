import Ajv2020 from 'ajv/dist/2020';
import type request from 'supertest';

type Doc = { paths: Record<string, Record<string, unknown>>; components: unknown };
type Operation = { responses?: Record<string, { $ref?: string }>; requestBody?: { content: Record<string, { schema: unknown }> } };

/**
 * Validates real bodies against the schemas the OpenAPI document gives for an operation's request
 * and responses (JSON answers; other media types are checked for being documented).
 */
export function openApiChecker(doc: Doc) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat('date', /^\d{4}-\d{2}-\d{2}$/);
  ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/);
  ajv.addFormat('uri', /^[a-z][a-z0-9+.-]*:/i);
  const local = (schema: unknown) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/'));
  ajv.addSchema(local({ $id: 'openapi', components: doc.components }));
  const resolve = <T>(value: T & { $ref?: string }): T =>
    (value.$ref ? value.$ref.split('/').slice(1).reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], doc) : value) as T;
  const check = (schema: unknown, body: unknown, what: string) => {
    const validate = ajv.compile(local(schema));
    const valid = validate(body);
    expect({ what, errors: valid ? [] : validate.errors }).toEqual({ what, errors: [] });
  };
  const operation = (path: string, method: string) => {
    const op = doc.paths[path]?.[method] as Operation | undefined;
    expect({ path, method, documented: !!op }).toEqual({ path, method, documented: true });
    return op as Operation;
  };
  return {
    /** The answer's status is documented, and a JSON answer matches its schema; returns the documented media types. */
    response(path: string, method: string, res: request.Response): string[] {
      const responses = operation(path, method).responses ?? {};
      const documented = responses[String(res.status)] ?? responses.default;
      expect({ path, method, status: res.status, documented: !!documented }).toEqual({ path, method, status: res.status, documented: true });
      const content = resolve(documented as { content?: Record<string, { schema: unknown }> }).content ?? {};
      if (String(res.headers['content-type'] ?? '').startsWith('application/json')) check(content['application/json']?.schema, res.body, `${res.status} of ${method.toUpperCase()} ${path}`);
      return Object.keys(content);
    },
    requestBody(path: string, method: string, body: unknown, mediaType = 'application/json') {
      const schema = operation(path, method).requestBody?.content[mediaType]?.schema;
      expect({ path, method, mediaType, documented: !!schema }).toEqual({ path, method, mediaType, documented: true });
      if (mediaType === 'application/json') check(schema, body, `body of ${method.toUpperCase()} ${path}`);
    },
  };
}
