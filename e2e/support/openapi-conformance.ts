import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { http } from './country-harness';

/**
 * Checks real answers against the served OpenAPI document (`GET /.well-known/openapi`): the answer's
 * status must be documented for the route with a JSON schema, and the body must match it. Returns
 * `[valid, errors]`, `[true, null]` when it conforms; a status the document gives no schema throws,
 * naming the route. `.request` checks a request body the same way.
 */
export async function openApiConformance(baseUrl: string) {
  const document = (await http(baseUrl, 'GET', '/.well-known/openapi')).body;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'openapi.json', components: document.components });
  const check = (schema: unknown, body: unknown): [boolean, unknown] => {
    // The document's references point into its components, kept under openapi.json.
    const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"openapi.json#/components/')));
    return [validate(body) as boolean, validate.errors ?? null];
  };
  const operation = (method: string, path: string) => document.paths[path]?.[method.toLowerCase()];
  return Object.assign(
    (method: string, path: string, answer: { status: number; body: unknown }): [boolean, unknown] => {
      const schema = operation(method, path)?.responses?.[String(answer.status)]?.content?.['application/json']?.schema;
      if (!schema) throw new Error(`The OpenAPI document gives ${method} ${path} no schema for ${answer.status}`);
      return check(schema, answer.body);
    },
    {
      /** The same for a request body the route takes. */
      request(method: string, path: string, body: unknown): [boolean, unknown] {
        const schema = operation(method, path)?.requestBody?.content?.['application/json']?.schema;
        if (!schema) throw new Error(`The OpenAPI document gives ${method} ${path} no request body schema`);
        return check(schema, body);
      },
    },
  );
}
