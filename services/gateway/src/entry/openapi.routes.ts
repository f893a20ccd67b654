import { Router } from 'express';
import { buildOpenApiDocument, openApiRoute } from '@screenfleet/contracts';

export const openApiPath = openApiRoute.path;

/**
 * GET /openapi.json: the API's OpenAPI 3.1 document, generated from the contracts' schemas.
 * Served without a token: it describes the API and holds no data, and a client (or a generator)
 * needs it before it has a token. Built and serialised once per app.
 */
export function openApiRoutes(): Router {
  const router = Router();
  const document = JSON.stringify(buildOpenApiDocument());
  router.get(openApiPath, (_req, res) => {
    res.type('application/json').send(document);
  });
  return router;
}
