// The OpenAPI document as a client reads it. The route schemas are written for the server's
// validator (TypeBox, draft-07 style, defaults filled in on arrival); two of their habits would
// mislead a client or a JSON Schema 2020-12 validator, so the served document is reshaped once:
// - a tuple (`items: [..]`, `additionalItems: false`) becomes `prefixItems` with `items: false`;
// - in request bodies, a property with a `default` is not required: the server fills it in.
type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Calls `visit` on every object inside `node`, parents before children. */
function walk(node: unknown, visit: (schema: Json) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) walk(item, visit);
    return;
  }
  if (!isObject(node)) return;
  visit(node);
  for (const value of Object.values(node)) walk(value, visit);
}

function tupleTo2020(schema: Json): void {
  if (!Array.isArray(schema.items)) return;
  schema.prefixItems = schema.items;
  if (schema.additionalItems === false) schema.items = false;
  else delete schema.items;
  delete schema.additionalItems;
}

function defaultsOptional(schema: Json): void {
  const { required, properties } = schema;
  if (!Array.isArray(required) || !isObject(properties)) return;
  const needed = required.filter((name) => !(isObject(properties[name]) && 'default' in properties[name]));
  if (needed.length) schema.required = needed;
  else delete schema.required;
}

export function shapeDocument<T>(document: T): T {
  const doc = structuredClone(document) as Json;
  walk(doc, tupleTo2020);
  for (const operations of Object.values((doc.paths ?? {}) as Record<string, Json>)) {
    for (const operation of Object.values(operations)) {
      if (isObject(operation) && isObject(operation.requestBody)) walk(operation.requestBody.content, defaultsOptional);
    }
  }
  return doc as T;
}
