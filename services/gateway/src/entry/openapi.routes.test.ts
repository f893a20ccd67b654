import type express from 'express';
import { apiOperations, buildOpenApiDocument } from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import { createLogger, createMetrics } from '@screenfleet/runtime';
import { createGatewayApp } from '../app';
import { createTokenRegistry, scopes } from '../auth/tokens';
import { createGatewayMetrics } from '../index';
import { createOperatorPresence } from '../domain/operator-presence';
import { consoleRoutePaths } from './console.routes';
import { docsRoutePaths } from './docs.routes';

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
}

/** `METHOD path` of every route the app registers, nested routers included (Express 5). */
function registeredRoutes(app: express.Express): string[] {
  const walk = (stack: Layer[]): string[] =>
    stack.flatMap((layer) =>
      layer.route
        ? Object.keys(layer.route.methods).map(
            // Express writes a path parameter `:name`, OpenAPI `{name}`.
            (m) => `${m.toUpperCase()} ${layer.route?.path.replace(/:(\w+)/g, '{$1}')}`,
          )
        : walk(layer.handle.stack ?? []),
    );
  return walk((app as unknown as { router: { stack: Layer[] } }).router.stack).sort();
}

function buildApp(): express.Express {
  // Nothing is sent: the routes are only registered, so the bus is never called.
  const bus = {} as Bus;
  const logger = createLogger({ service: 'test', level: 'silent' });
  return createGatewayApp(
    {
      bus,
      auth: { tokens: createTokenRegistry([]), allowUnauthenticatedLoopback: false },
      metrics: createGatewayMetrics(createMetrics()),
      logger,
    },
    createOperatorPresence({ bus, logger }),
  );
}

describe('the OpenAPI document and the gateway', () => {
  const doc = buildOpenApiDocument();
  const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
    .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();

  // The reference page and its script are a view of the document for people, and the console's
  // page and files a client of the API, not operations a client calls: they are left out by
  // name, and each name must still be a served route.
  const notInDocument = [...docsRoutePaths, ...consoleRoutePaths].map((path) => `GET ${path}`);

  it('when the app registers its routes, then the document has every one and no other', () => {
    const served = registeredRoutes(buildApp());
    expect(served).toContain('POST /add');
    expect(served).toContain('GET /openapi.json');
    expect(documented).toEqual(served.filter((route) => !notInDocument.includes(route)));
  });

  it('when routes are left out of the document, then they are exactly the docs page and console routes', () => {
    const served = registeredRoutes(buildApp());
    expect(notInDocument).toEqual([
      'GET /docs',
      expect.stringMatching(/^GET \/docs\/assets\//),
      'GET /console',
      'GET /console/assets/*asset',
    ]);
    for (const route of notInDocument) expect(served).toContain(route);
    for (const route of notInDocument) expect(documented).not.toContain(route);
  });

  it("when a documented route needs a token, then its scope is one of the gateway's", () => {
    for (const operation of apiOperations) {
      if (operation.scope !== null && operation.scope !== 'any')
        expect(scopes).toContain(operation.scope);
    }
  });
});
