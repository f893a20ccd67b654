import { spawnSync } from 'node:child_process';
import Ajv2020 from 'ajv/dist/2020';
import {
  addRequestSchema,
  apiOperations,
  archiveActionResultSchema,
  buildOpenApiDocument,
  searchParameterNames,
  toJsonSchema2020,
  validators,
  type ComponentName,
  type Validator,
} from '../index';

type Doc = ReturnType<typeof buildOpenApiDocument>;
type Media = {
  schema?: { $ref?: string };
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
};

/**
 * Runs @seriousme/openapi-schema-validator on each document. The package is ESM only, which
 * Jest 29 cannot load without --experimental-vm-modules, so it runs in a plain `node` (>= 20.19
 * loads it natively): the documents go in on stdin, the results come back on stdout.
 */
function validateOpenApi(documents: unknown[]): Array<{ valid: boolean; errors?: unknown }> {
  const script = `
    import { Validator } from '@seriousme/openapi-schema-validator';
    let input = '';
    for await (const chunk of process.stdin) input += chunk;
    const results = [];
    for (const document of JSON.parse(input)) {
      const validator = new Validator();
      const result = await validator.validate(document);
      results.push({ ...result, version: validator.version });
    }
    process.stdout.write(JSON.stringify(results));
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: __dirname,
    input: JSON.stringify(documents),
    encoding: 'utf8',
    timeout: 20_000,
  });
  if (run.status !== 0) throw new Error(`the validator did not run: ${run.stderr}`);
  return JSON.parse(run.stdout) as Array<{ valid: boolean; errors?: unknown; version: string }>;
}

/**
 * The contracts' own validator for a component a body or an example refers to: each module
 * names them alike (component `AddRequest`, validator `addRequest`).
 */
const validatorFor = (component: ComponentName): Validator<unknown> | undefined =>
  (validators as Record<string, Validator<unknown>>)[
    component.charAt(0).toLowerCase() + component.slice(1)
  ];

const componentOf = (media: Media): ComponentName =>
  (media.schema?.$ref ?? '').replace('#/components/schemas/', '') as ComponentName;

/** Every example of the document with the component its media type names. */
function examplesOf(doc: Doc): Array<{ where: string; component: ComponentName; value: unknown }> {
  const out: Array<{ where: string; component: ComponentName; value: unknown }> = [];
  const collect = (where: string, content: Record<string, Media> | undefined) => {
    const media = content?.['application/json'];
    if (!media) return;
    if (media.example !== undefined)
      out.push({ where, component: componentOf(media), value: media.example });
    for (const [name, example] of Object.entries(media.examples ?? {}))
      out.push({ where: `${where} ${name}`, component: componentOf(media), value: example.value });
  };
  const paths = doc.paths as Record<string, Record<string, Record<string, unknown>>>;
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const body = operation.requestBody as { content?: Record<string, Media> } | undefined;
      collect(`${method} ${path} request`, body?.content);
      const responses = operation.responses as Record<string, { content?: Record<string, Media> }>;
      for (const [status, response] of Object.entries(responses))
        collect(`${method} ${path} ${status}`, response.content);
    }
  }
  const shared = (
    doc.components as { responses: Record<string, { content: Record<string, Media> }> }
  ).responses;
  for (const [name, response] of Object.entries(shared)) collect(name, response.content);
  return out;
}

/** The document's own (2020-12) schemas, compiled as a client generator would read them. */
function documentAjv(doc: Doc): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, discriminator: true, allErrors: true });
  ajv.addFormat('date-time-offset', true);
  ajv.addKeyword({ keyword: 'x-key-name' });
  ajv.addKeyword({ keyword: 'x-max-bytes' });
  ajv.addSchema(doc, 'openapi.json');
  return ajv;
}

describe('the OpenAPI document', () => {
  const doc = buildOpenApiDocument();

  it('when checked by @seriousme/openapi-schema-validator, then it is valid OpenAPI 3.1 (and a broken copy is not)', () => {
    const broken = structuredClone(doc) as { paths: Record<string, Record<string, unknown>> };
    const add = broken.paths['/add']?.post as { responses: Record<string, unknown> };
    add.responses['200'] = { content: {} }; // a response without its required description
    const [result, brokenResult] = validateOpenApi([doc, broken]);
    expect(result).toEqual({ valid: true, version: '3.1' });
    expect(brokenResult?.valid).toBe(false);
  });

  it('when each component schema is checked against the JSON Schema 2020-12 meta-schema, then it is valid', () => {
    const ajv = new Ajv2020({ strict: false });
    const schemas = (doc.components as { schemas: Record<string, object> }).schemas;
    for (const [name, schema] of Object.entries(schemas)) {
      const valid = ajv.validateSchema(schema);
      expect({ name, valid, errors: ajv.errors ?? null }).toEqual({
        name,
        valid: true,
        errors: null,
      });
    }
  });

  it("when every example is checked, then it passes the contracts' validators and the document's own schema", () => {
    const examples = examplesOf(doc);
    const ajv = documentAjv(doc);
    for (const op of apiOperations.filter((operation) => operation.request)) {
      const where = `${op.method} ${op.path} request`;
      expect(examples.filter((example) => example.where.startsWith(where)).length).toBeGreaterThan(
        0,
      );
    }
    expect(examples.length).toBeGreaterThan(20);
    for (const { where, component, value } of examples) {
      const validator = validatorFor(component);
      expect({ where, component, known: validator !== undefined }).toEqual({
        where,
        component,
        known: true,
      });
      expect({ where, errors: validator?.check(structuredClone(value)) }).toEqual({
        where,
        errors: [],
      });
      const validate = ajv.getSchema(`openapi.json#/components/schemas/${component}`);
      expect({
        where,
        valid: validate?.(structuredClone(value)),
        errors: validate?.errors ?? null,
      }).toEqual({ where, valid: true, errors: null });
    }
  });

  it("when a request body breaks its contract, then the document's schema refuses it too", () => {
    const ajv = documentAjv(doc);
    const validate = ajv.getSchema('openapi.json#/components/schemas/AddRequest');
    const invalid = { device_name: 'desk', content: { content_type: 'frames', data: [{}] } };
    expect(validators.addRequest.check(structuredClone(invalid))).not.toEqual([]);
    expect(validate?.(invalid)).toBe(false);
  });

  it('when a route needs a token, then its scope is its security requirement and starts its description', () => {
    const paths = doc.paths as Record<
      string,
      Record<string, { security: unknown; description: string }>
    >;
    for (const op of apiOperations) {
      const operation = paths[op.path]?.[op.method];
      if (op.scope === null) {
        expect(operation?.security).toEqual([]);
      } else if (op.scope === 'any') {
        expect(operation?.security).toEqual([{ bearerAuth: [] }]);
        expect(operation?.description.startsWith('Any valid token')).toBe(true);
      } else {
        expect(operation?.security).toEqual([{ bearerAuth: [op.scope] }]);
        expect(operation?.description.startsWith(`Scope \`${op.scope}\``)).toBe(true);
      }
    }
  });

  it('when a contracts schema embeds another exported one, then the document refers to it instead of repeating it', () => {
    const schemas = (doc.components as { schemas: Record<string, Record<string, unknown>> })
      .schemas;
    const properties = schemas.ArchiveActionResult?.properties as Record<string, unknown>;
    expect(properties.status).toEqual({ $ref: '#/components/schemas/ArchiveStatus' });
    expect(archiveActionResultSchema.properties.status).toHaveProperty('properties');
    expect(JSON.stringify(schemas.AddRequest)).toContain('#/components/schemas/ContentItem');
    expect(schemas.AddRequest?.required).toEqual(addRequestSchema.required);
  });
});

describe('GET /search in the OpenAPI document', () => {
  it('when its parameters are listed, then they are the ones the parser reads, plus the ignored timezone', () => {
    const paths = buildOpenApiDocument().paths as Record<
      string,
      Record<string, { parameters: Array<{ name: string; in: string }> }>
    >;
    const parameters = paths['/search']?.get?.parameters ?? [];
    expect(parameters.every((parameter) => parameter.in === 'query')).toBe(true);
    expect(parameters.map((parameter) => parameter.name).sort()).toEqual(
      [...searchParameterNames, 'timezone'].sort(),
    );
  });
});

describe('toJsonSchema2020', () => {
  it('when a draft-07 schema uses keywords 2020-12 renamed, then they are renamed', () => {
    const draft07 = {
      definitions: { name: { type: 'string' } },
      properties: {
        pair: {
          type: 'array',
          items: [{ type: 'string' }, { type: 'number' }],
          additionalItems: false,
        },
        list: { type: 'array', items: { type: 'string' } },
      },
      dependencies: { a: ['b'], c: { required: ['d'] } },
    };
    expect(toJsonSchema2020(draft07)).toEqual({
      $defs: { name: { type: 'string' } },
      properties: {
        pair: {
          type: 'array',
          prefixItems: [{ type: 'string' }, { type: 'number' }],
          items: false,
        },
        list: { type: 'array', items: { type: 'string' } },
      },
      dependentRequired: { a: ['b'] },
      dependentSchemas: { c: { required: ['d'] } },
    });
  });

  it('when a schema holds a $ref, then it is refused rather than emitted unresolvable', () => {
    expect(() => toJsonSchema2020({ properties: { a: { $ref: '#/definitions/a' } } })).toThrow(
      '$ref',
    );
  });
});
